package main

// airlock serve --db postgres://... (and postgresql://): importing the
// store registers the scheme with store.Open.
import _ "github.com/airlockhq/airlock/server/store/postgres"
