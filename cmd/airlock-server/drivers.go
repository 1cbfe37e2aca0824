package main

import (
	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/provider/docker"
)

// drivers are the providers a catalog may name. Each connects to
// nothing until a sandbox of its kind is first used.
func drivers() []provider.Driver {
	return []provider.Driver{provider.LocalDriver(), docker.Driver()}
}
