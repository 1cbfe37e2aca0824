package docker

import (
	"context"
	"time"
)

// StartUnendedCall makes a keeper container and tells its keeper that a
// call runs until deadline, then never says the call ended: what a
// frozen airlock does. It returns the container's id.
func (p *Provider) StartUnendedCall(ctx context.Context, deadline time.Time) (string, error) {
	c, err := p.create(ctx, "", "unended", false)
	if err != nil {
		return "", err
	}
	return c.id, c.callStarts(deadline)
}
