// Package provider runs "this code, somewhere safe" behind a name an
// operator configured and an agent was assigned: the named-sandbox layer
// beside sandbox.Executor.
//
// It owns the contract (Request, Result, Status, the typed errors), the
// catalog read from sandboxes.toml, the capabilities each provider
// declares (a sandbox whose configuration needs one its provider lacks
// fails at load, before anything runs), invocation-scoped handles that
// die with their invocation, the all-in deadline (queue + start + run),
// and the local provider on airlock's own sandbox engine. The Docker
// provider lives in provider/docker.
//
// It does not decide whether a call may run at all (package gate does)
// and it owns no OS mechanism: the local provider uses package sandbox's
// public API, the Docker provider a Docker Engine.
package provider
