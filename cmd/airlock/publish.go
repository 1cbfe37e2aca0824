package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// publishFlag is --publish [[ADDR:]HOST_PORT:]PORT, repeatable: a port
// the command listens on inside the sandbox, reachable on the host at
// ADDR:HOST_PORT (default: 127.0.0.1 and the same port). An ADDR that is
// not loopback must be in the profile's network.publish_addresses
// (checkPublish).
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

const publishUsage = "want [[ADDR:]HOST_PORT:]PORT with ports from 1 to 65535 and ADDR an IP address, as in --publish 8000, --publish 18000:8000 or --publish 0.0.0.0:18000:8000"

func parsePublish(v string) (sandbox.Publish, error) {
	p := sandbox.Publish{HostAddr: "127.0.0.1"}
	rest, port := "", v
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		rest, port = v[:i], v[i+1:]
	}
	want := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			return 0, errors.New(publishUsage)
		}
		return n, nil
	}
	var err error
	if p.Port, err = want(port); err != nil {
		return p, err
	}
	p.HostPort = p.Port
	if rest == "" && strings.Contains(v, ":") {
		return p, errors.New(publishUsage)
	}
	if rest != "" {
		addr, hostPort := "", rest
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			addr, hostPort = rest[:i], rest[i+1:]
			if addr == "" {
				return p, errors.New(publishUsage)
			}
		}
		if p.HostPort, err = want(hostPort); err != nil {
			return p, err
		}
		if addr != "" {
			ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
			if err != nil || ip.Zone() != "" {
				return p, errors.New(publishUsage)
			}
			p.HostAddr = ip.Unmap().String()
		}
	}
	return p, nil
}

// checkPublish refuses a published address the profile does not allow,
// before anything runs, naming the setting that would allow it.
func checkPublish(ps []sandbox.Publish, p *profile.Profile) error {
	for _, pub := range ps {
		if !p.CanPublishOn(pub.HostAddr) {
			return fmt.Errorf("--publish %s: the profile allows publishing on loopback only; to listen on %s, add it to [network] publish_addresses in the profile (docs/PROFILES.md)", pub, pub.HostAddr)
		}
	}
	return nil
}

// publishedDetail is the published ports as the audit log records them.
func publishedDetail(ps []sandbox.Publish) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return s
}
