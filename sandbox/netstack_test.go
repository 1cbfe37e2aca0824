package sandbox

// The tests run networked profiles with the gateway in process, as
// airlock-server and Go API users do; cmd/airlock's tests cover the
// gateway in its own executable (egress/remote).
import _ "github.com/airlockhq/airlock/egress/netstack"
