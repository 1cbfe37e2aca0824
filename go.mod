module github.com/airlockhq/airlock

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
