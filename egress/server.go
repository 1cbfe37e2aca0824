package egress

import (
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Defaults of Config's zero values.
const (
	DefaultDialTimeout   = 30 * time.Second
	DefaultLookupTimeout = 5 * time.Second
)

// Config configures a Gateway. Only Policy is required.
type Config struct {
	// Policy decides what the sandbox may reach.
	Policy *Policy
	// Resolver resolves the names the Policy allows. Nil means
	// net.DefaultResolver (the host's resolv.conf). Tests point it at a
	// DNS server of their own. Only a gateway in this process can use
	// one.
	Resolver *net.Resolver
	// Dialer opens the host-side connections. Nil means a net.Dialer with
	// DefaultDialTimeout. Only a gateway in this process can use one.
	Dialer *net.Dialer
	// LookupTimeout bounds one DNS lookup; zero means
	// DefaultLookupTimeout.
	LookupTimeout time.Duration
	// OnDenial, if set, is called once for each distinct Denial, from the
	// gateway's goroutines, as it happens.
	OnDenial func(Denial)
}

// Gateway is one sandbox's gateway as its supervisor holds it: serving
// the sandbox's TAP device until Close. The connect broker of package
// sandbox asks it about connections it makes itself.
type Gateway interface {
	// PermitsTCP reports whether the gateway would carry a TCP
	// connection from the sandbox to dst:port right now: the decision a
	// connection arriving on the TAP device gets, against the names this
	// gateway resolved. It records nothing.
	PermitsTCP(dst netip.Addr, port uint16) bool
	// CheckTCP is PermitsTCP for a connection the caller makes itself,
	// which the gateway never sees: a refusal is recorded as a Denial.
	CheckTCP(dst netip.Addr, port uint16) bool
	// Denials returns the distinct refusals, in order, and how many
	// more were not kept; complete once Close has returned.
	Denials() ([]Denial, int)
	// Close ends every connection, stops the gateway and closes the TAP
	// device. An error says the gateway failed during the run (its
	// refusals may be incomplete). Safe to call more than once.
	Close() error
}

// Stopper is a Gateway that can stop before Close: Stop ends every
// connection and goroutine, so that nothing passes any more and Denials
// is final, but leaves the TAP device open; Close then removes it, which
// waits for the kernel's RCU grace periods (about 20 ms) and which no
// caller needs to wait for once the sandbox's processes are gone.
// netstack.Gateway is one.
type Stopper interface {
	Gateway
	Stop()
}

// Server starts the gateway of one run on its TAP device.
type Server interface {
	// Serve starts a Gateway on tap, a TAP device (IFF_TAP|IFF_NO_PI)
	// whose other side is the sandbox's TapName configured with
	// SandboxIPv4 and SandboxIPv6. It takes ownership of tap, also when
	// it fails.
	Serve(tap *os.File, cfg Config) (Gateway, error)
}

var (
	registeredMu sync.Mutex
	registered   Server
)

// Register makes s the Server that InProcess returns. Package
// egress/netstack registers its in-process gateway from its init, so a
// program gets one by importing that package; programs that do not
// (airlock's CLI, which runs the gateway in its own executable) keep
// gVisor's netstack out of their binary.
func Register(s Server) {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	registered = s
}

// InProcess returns the Server registered with Register, or nil when the
// program registered none.
func InProcess() Server {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	return registered
}
