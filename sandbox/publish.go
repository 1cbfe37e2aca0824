package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Publish is one port of the command published on the host (Cmd.Publish):
// a connection to HostAddr:HostPort on the host is carried to Port on the
// sandbox's own loopback, where a dev server the command started
// listens. Only a run with a network namespace of its own (network none
// or an allowlist) can publish; with network "all" the command's ports
// are the host's already.
type Publish struct {
	// HostAddr is the host address to listen on, an IP literal; empty
	// means 127.0.0.1, so nothing off this machine reaches the command.
	// An address that is not loopback must be in the profile's
	// network.publish_addresses.
	HostAddr string `json:"host_addr"`
	// HostPort is the host's port; 0 means the same as Port.
	HostPort int `json:"host_port"`
	Port     int `json:"port"`
}

// String is HOST_ADDR:HOST_PORT->PORT.
func (p Publish) String() string {
	return fmt.Sprintf("%s->%d", net.JoinHostPort(p.HostAddr, strconv.Itoa(p.HostPort)), p.Port)
}

// publisher is a run's published ports: the host listeners and the
// init's socket factory (linux/publish.go).
type publisher struct {
	ports     []Publish
	listeners []net.Listener
	mu        sync.Mutex // one request on the factory at a time
	factory   *os.File
}

// preparePublish listens on the host's ports before the run starts, so
// a port in use is a setup error and nothing runs, and hands the helper
// the socket its init makes sockets on.
func (p *Process) preparePublish(cfg *linux.Config, c *exec.Cmd, ownNet bool) error {
	if len(p.cmd.Publish) == 0 {
		return nil
	}
	if !ownNet {
		return &SetupError{Step: "publish", Err: errors.New("the command's ports are the host's already with network \"all\"; publish ports only with network none or an allowlist")}
	}
	pub := &publisher{}
	p.pub = pub
	for _, want := range p.cmd.Publish {
		if want.HostAddr == "" {
			want.HostAddr = "127.0.0.1"
		}
		if want.HostPort == 0 {
			want.HostPort = want.Port
		}
		// Off loopback, a published port is reachable from other
		// machines: only the profile can open that.
		if !p.e.profile.CanPublishOn(want.HostAddr) {
			return &SetupError{Step: "publish", Err: fmt.Errorf("the profile does not allow publishing on %s; list it in [network] publish_addresses (docs/PROFILES.md) or publish on loopback", want.HostAddr)}
		}
		if want.Port < 1 || want.Port > 65535 || want.HostPort < 1 || want.HostPort > 65535 {
			return &SetupError{Step: "publish", Err: fmt.Errorf("port %d:%d is out of range; ports are 1 to 65535", want.HostPort, want.Port)}
		}
		l, err := net.Listen("tcp", net.JoinHostPort(want.HostAddr, strconv.Itoa(want.HostPort)))
		if err != nil {
			return &SetupError{Step: "publish", Err: fmt.Errorf("listen on the host for %s: %w (choose another host port: --publish HOST_PORT:%d)", want, err, want.Port)}
		}
		pub.ports = append(pub.ports, want)
		pub.listeners = append(pub.listeners, l)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return &SetupError{Step: "publish", Err: fmt.Errorf("socketpair: %w", err)}
	}
	pub.factory = os.NewFile(uintptr(fds[0]), "publish socket")
	child := os.NewFile(uintptr(fds[1]), "publish socket")
	c.ExtraFiles = append(c.ExtraFiles, child)
	p.pipes = append(p.pipes, child)
	cfg.PublishFD = 2 + len(c.ExtraFiles)
	return nil
}

// startPublish serves the host's listeners once the command runs.
func (p *Process) startPublish() {
	if p.pub == nil {
		return
	}
	for i, l := range p.pub.listeners {
		go p.pub.accept(l, p.pub.ports[i].Port)
	}
}

func (pub *publisher) accept(l net.Listener, port int) {
	for {
		host, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer host.Close()
			inside, err := pub.dial(port)
			if err != nil {
				return // the command does not listen (yet): the client sees a reset
			}
			defer inside.Close()
			go func() {
				_, _ = io.Copy(inside, host)
				if tc, ok := inside.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}()
			// The command's side ending ends the connection: once the
			// run is over, its sockets are gone and so is this one.
			_, _ = io.Copy(host, inside)
		}()
	}
}

// dial connects to the sandbox's 127.0.0.1:port through a socket the
// init made in the sandbox's network namespace.
func (pub *publisher) dial(port int) (net.Conn, error) {
	pub.mu.Lock()
	fd, err := pub.socket()
	pub.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// A blocking connect on loopback: refused or made at once.
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "published connection")
	defer f.Close()
	return net.FileConn(f)
}

func (pub *publisher) socket() (int, error) {
	sc, err := pub.factory.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, serr := -1, error(nil)
	cerr := sc.Control(func(u uintptr) {
		if err := unix.Sendmsg(int(u), []byte{linux.PublishTCP4}, nil, nil, 0); err != nil {
			serr = err
			return
		}
		buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
		_, oobn, _, _, err := unix.Recvmsg(int(u), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil {
			serr = err
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			serr = errors.New("the sandbox made no socket")
			return
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			serr = errors.New("the sandbox made no socket")
			return
		}
		fd = fds[0]
	})
	if cerr != nil {
		return -1, cerr
	}
	return fd, serr
}

// closePublish stops listening and ends the connections; the command is
// gone by then.
func (p *Process) closePublish() {
	if p.pub == nil {
		return
	}
	for _, l := range p.pub.listeners {
		l.Close()
	}
	if p.pub.factory != nil {
		p.pub.factory.Close()
	}
	p.pub = nil
}
