package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/airlockhq/airlock/sandbox"
)

// publishFlag is --publish [HOST_PORT:]PORT, repeatable: a port the
// command listens on inside the sandbox, reachable on the host's
// 127.0.0.1 at HOST_PORT (default: the same port).
type publishFlag []sandbox.Publish

func (f *publishFlag) String() string {
	var s []string
	for _, p := range *f {
		s = append(s, p.String())
	}
	return strings.Join(s, ",")
}

func (f *publishFlag) Set(v string) error {
	p, err := parsePublish(v)
	if err != nil {
		return err
	}
	*f = append(*f, p)
	return nil
}

func parsePublish(v string) (sandbox.Publish, error) {
	host, port, two := strings.Cut(v, ":")
	if !two {
		host, port = "", v
	}
	want := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			return 0, fmt.Errorf("want [HOST_PORT:]PORT with ports from 1 to 65535, as in --publish 8000 or --publish 18000:8000")
		}
		return n, nil
	}
	var p sandbox.Publish
	var err error
	if p.Port, err = want(port); err != nil {
		return p, err
	}
	p.HostPort = p.Port
	if two {
		if p.HostPort, err = want(host); err != nil {
			return p, err
		}
	}
	p.HostAddr = "127.0.0.1"
	return p, nil
}

// publishedDetail is the published ports as the audit log records them.
func publishedDetail(ps []sandbox.Publish) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return s
}
