package netstack

import (
	"testing"
	"time"
)

// SetUDPLimits shortens how long a relayed UDP flow may idle and how
// many flows a gateway relays at once, for one test. Call it before the
// gateway is served: it puts the limits back in a cleanup, which runs
// after the gateway's own.
func SetUDPLimits(t testing.TB, idle time.Duration, flows int) {
	oldIdle, oldFlows := udpIdle, maxUDPFlows
	udpIdle, maxUDPFlows = idle, flows
	t.Cleanup(func() { udpIdle, maxUDPFlows = oldIdle, oldFlows })
}
