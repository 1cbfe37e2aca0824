// Package remote runs a sandbox's egress gateway in a process of its
// own, so the program that supervises the run need not link gVisor's
// netstack: airlock's CLI starts the airlock-gateway executable for each
// run with a network and talks to it over one control socket.
//
// The supervisor's side is Server (an egress.Server) and the Gateway it
// returns; the gateway's side is ServeControl, which the gateway program
// calls with the netstack's Serve. Both halves of the protocol live here,
// and neither imports the netstack.
//
// The protocol: a SOCK_SEQPACKET socket pair, one JSON message per
// packet. The supervisor sends "serve" (the Policy's network settings,
// which the gateway compiles again, and the TAP device's descriptor) and
// the gateway answers "ready" or "failed". Then the supervisor asks
// "check" for each connection its connect broker decides, answered by
// "verdict" in order; the gateway sends each "denial" as it happens,
// and a denial that a check recorded before that check's verdict.
// "close" ends the gateway; "closed" is its last message. A gateway
// whose supervisor goes away (its end of the socket closes) stops at
// once; a supervisor whose gateway dies refuses every check from then
// on and says so in Close's error: nothing passes without a decision.
//
// What it does not do: decide anything (egress.Policy and the netstack
// do), or find the gateway's executable (cmd/airlock does, beside
// itself).
package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
)

// The messages' operations.
const (
	opServe   = "serve"   // supervisor: the settings, with the TAP device
	opCheck   = "check"   // supervisor: PermitsTCP (record false) or CheckTCP
	opClose   = "close"   // supervisor: end the gateway
	opReady   = "ready"   // gateway: serving
	opFailed  = "failed"  // gateway: could not serve; Error says why
	opDenial  = "denial"  // gateway: one distinct refusal
	opVerdict = "verdict" // gateway: the answer to the oldest check
	opClosed  = "closed"  // gateway: stopped; Dropped, Error
)

// message is one packet either way; each operation uses its own fields.
type message struct {
	Op string `json:"op"`

	// serve
	Mode          string   `json:"mode,omitempty"`
	Allow         []string `json:"allow,omitempty"`
	Deny          []string `json:"deny,omitempty"`
	LookupTimeout int64    `json:"lookup_timeout_ns,omitempty"`

	// check
	Addr   string `json:"addr,omitempty"`
	Port   uint16 `json:"port,omitempty"`
	Record bool   `json:"record,omitempty"`

	// verdict
	OK bool `json:"ok,omitempty"`

	// denial
	Denial *egress.Denial `json:"denial,omitempty"`

	// failed, closed
	Error   string `json:"error,omitempty"`
	Dropped int    `json:"dropped,omitempty"`
}

// maxMessage bounds one packet: the serve message carries the whole
// allowlist, every other one a few hundred bytes.
const maxMessage = 1 << 20

// socketPair returns the two ends of a new control socket.
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress gateway: control socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "gateway-control"), os.NewFile(uintptr(fds[1]), "gateway-control"), nil
}

// conn is one end of the control socket.
type conn struct {
	uc  *net.UnixConn
	buf []byte
}

// newConn takes f, one end of a SOCK_SEQPACKET pair.
func newConn(f *os.File) (*conn, error) {
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("egress gateway: control socket: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("egress gateway: the control socket is not a unix socket")
	}
	return &conn{uc: uc, buf: make([]byte, maxMessage)}, nil
}

// send writes m, with fd as its one right when fd >= 0.
func (c *conn) send(m message, fd int) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	_, _, err = c.uc.WriteMsgUnix(b, oob, nil)
	return err
}

// recv reads one message and the descriptor it carries (-1: none). A
// closed peer is io.EOF.
func (c *conn) recv() (message, int, error) {
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, flags, _, err := c.uc.ReadMsgUnix(c.buf, oob)
	fd := -1
	if oobn > 0 {
		if cms, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
			for _, cm := range cms {
				if fds, rerr := unix.ParseUnixRights(&cm); rerr == nil {
					for _, f := range fds {
						if fd < 0 {
							fd = f
						} else {
							unix.Close(f)
						}
					}
				}
			}
		}
	}
	if errors.Is(err, io.EOF) {
		closeFD(fd)
		return message{}, -1, errEOF
	}
	if err != nil {
		closeFD(fd)
		return message{}, -1, err
	}
	if n == 0 && oobn == 0 {
		return message{}, -1, errEOF
	}
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		closeFD(fd)
		return message{}, -1, errors.New("egress gateway: a control message was truncated")
	}
	var m message
	if err := json.Unmarshal(c.buf[:n], &m); err != nil {
		closeFD(fd)
		return message{}, -1, fmt.Errorf("egress gateway: bad control message: %w", err)
	}
	return m, fd, nil
}

func (c *conn) close() error { return c.uc.Close() }

// errEOF: the other end closed the control socket (a zero-length read
// on a SOCK_SEQPACKET socket).
var errEOF = errors.New("the control socket was closed")

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}
