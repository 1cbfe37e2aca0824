package server

import (
	"context"
	"errors"
	"fmt"
)

// errCapped is the approver's error when no approval may open: the
// request is answered 429 with the approver's message.
var errCapped = errors.New("too many approvals pending")

// overCap says why c may not open another approval ("" when it may): its
// agent, or its workspace, has as many pending as the daemon allows. The
// count is the Store's, so it holds across replicas (two replicas may
// each let one more in at the same instant; the cap bounds, it does not
// count exactly).
func (s *Server) overCap(ctx context.Context, c call) (string, error) {
	byAgent, byWS, err := s.st.CountPending(ctx, s.now(), c.Identity.Agent, c.Workspace)
	if err != nil {
		return "", err
	}
	switch {
	case byAgent >= s.cfg.MaxPendingPerAgent:
		return fmt.Sprintf("the agent %q already has %d approvals waiting for an answer (at most %d); wait for them to be answered or expire, or start the daemon with a larger --max-pending-agent", c.Identity.Agent, byAgent, s.cfg.MaxPendingPerAgent), nil
	case byWS >= s.cfg.MaxPendingPerWorkspace:
		return fmt.Sprintf("the workspace %s already has %d approvals waiting for an answer (at most %d); wait for them to be answered or expire, or start the daemon with a larger --max-pending-workspace", c.Workspace, byWS, s.cfg.MaxPendingPerWorkspace), nil
	}
	return "", nil
}
