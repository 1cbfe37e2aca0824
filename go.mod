module github.com/airlockhq/airlock

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/cedar-policy/cedar-go v1.9.1
	github.com/modelcontextprotocol/go-sdk v1.8.0
	golang.org/x/sys v0.50.0
	gvisor.dev/gvisor v0.0.0-20260527191743-a81fd9dd382e
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/btree v1.1.2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/exp v0.0.0-20250711185948-6ae5c78190dc // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
