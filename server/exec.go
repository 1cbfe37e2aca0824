package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/server/store"
)

type execRequest struct {
	Sandbox     string            `json:"sandbox"`
	Agent       string            `json:"agent"`
	User        string            `json:"user"`
	Session     string            `json:"session"`
	Code        string            `json:"code"`
	Lang        string            `json:"lang"`
	Argv        []string          `json:"argv"`
	Stdin       string            `json:"stdin"`
	Files       map[string]string `json:"files"`
	OutputFiles []string          `json:"output_files"`
	Timeout     string            `json:"timeout"`
	ExecutionID string            `json:"execution_id"`
	Network     string            `json:"network"`
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	var req execRequest
	if bad := decodeBody(w, r, &req); bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	if !allow(w, r, "running code", store.RoleAgent) {
		return
	}
	// The agent and the user are the token's: a body naming others would
	// run in their sandboxes and join their session-scoped state.
	t := tokenFrom(r.Context())
	switch {
	case req.Agent != "" && req.Agent != t.Agent:
		writeError(w, http.StatusForbidden, "identity_mismatch", fmt.Sprintf("token %s belongs to the agent %q; it cannot run as %q (leave \"agent\" out: the token says who runs)", t.ID, t.Agent, req.Agent))
		return
	case req.User != "" && req.User != t.User:
		writeError(w, http.StatusForbidden, "identity_mismatch", fmt.Sprintf("token %s runs for the user %q, not %q (leave \"user\" out)", t.ID, t.User, req.User))
		return
	case req.Sandbox == "":
		writeError(w, http.StatusBadRequest, "bad_request", `"sandbox" is required: the name of a sandbox in the daemon's catalog`)
		return
	case (req.Code == "") == (len(req.Argv) == 0):
		writeError(w, http.StatusBadRequest, "bad_request", `give exactly one of "code" and "argv"`)
		return
	case req.Lang != "" && req.Code == "":
		writeError(w, http.StatusBadRequest, "bad_request", `"lang" goes only with "code"`)
		return
	}
	timeout, bad := parseWait(req.Timeout, `"timeout"`)
	if bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	if s.cfg.Catalog == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the daemon has no sandbox catalog; start it with --providers FILE")
		return
	}
	preq := provider.Request{Code: req.Code, Lang: req.Lang, Argv: req.Argv, Stdin: []byte(req.Stdin),
		OutputFiles: req.OutputFiles, Timeout: timeout, ExecutionID: req.ExecutionID, Network: req.Network}
	if req.Code != "" && preq.Lang == "" {
		preq.Lang = provider.LangPython
	}
	if len(req.Files) > 0 {
		preq.Files = map[string][]byte{}
		for k, v := range req.Files {
			preq.Files[k] = []byte(v)
		}
	}
	inv := s.cfg.Catalog.Begin(provider.Identity{Agent: t.Agent, User: t.User, Session: req.Session})
	defer inv.End()
	h, err := inv.Sandbox(req.Sandbox)
	if err != nil {
		execError(w, err)
		return
	}
	res, err := h.Execute(r.Context(), preq)
	if err != nil {
		execError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func execError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, provider.ErrNotAssigned):
		writeError(w, http.StatusForbidden, "not_assigned", err.Error())
	case errors.Is(err, provider.ErrInvalidRequest):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, provider.ErrUnavailable):
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
	}
}
