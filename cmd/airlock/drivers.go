package main

import "github.com/airlockhq/airlock/provider"

// drivers are the providers a catalog may name.
func drivers() []provider.Driver {
	return []provider.Driver{provider.LocalDriver()}
}
