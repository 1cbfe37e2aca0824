package main

// The tests that call dispatch in this process serve their runs'
// networks in process (gatewayOptions); the tests of the built binary
// run airlock-gateway beside it.
import _ "github.com/airlockhq/airlock/egress/netstack"
