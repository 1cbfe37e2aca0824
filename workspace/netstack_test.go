package workspace_test

// The network attack tests run their sandboxes with the gateway in
// process (egress/netstack registers it).
import _ "github.com/airlockhq/airlock/egress/netstack"
