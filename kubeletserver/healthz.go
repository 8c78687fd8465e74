package kubeletserver

import (
	"fmt"
	"net/http"
	"strings"
)

// check is one /healthz check: nil means healthy.
type check struct {
	name string
	run  func() error
}

// checks are the kubelet's: ping, log (the simulator's logger never blocks) and syncloop.
func (h *NodeHandler) checks() []check {
	return []check{
		{"ping", func() error { return nil }},
		{"log", func() error { return nil }},
		{"syncloop", h.syncLoopCheck},
	}
}

// syncLoopCheck is the kubelet's SyncLoopHealthCheck: the last sync loop pass must be recent. It
// reads the time of the pass, not a snapshot: a stuck loop takes none, and the check must answer.
func (h *NodeHandler) syncLoopCheck() error {
	last := h.opts.Board.lastPass()
	if last.IsZero() {
		return nil // the loop has not run yet; the kubelet's check passes until its first pass
	}
	if d := h.opts.Clock.Since(last); d > h.opts.SyncLoopThreshold {
		return fmt.Errorf("sync Loop took longer than expected")
	}
	return nil
}

// healthz is the apiserver healthz handler's root: ok, or the failed checks with their reasons
// withheld; ?verbose lists every check and ?exclude=name skips one.
func (h *NodeHandler) healthz(w http.ResponseWriter, r *http.Request) {
	exclude := map[string]bool{}
	for _, n := range r.URL.Query()["exclude"] {
		exclude[strings.TrimSpace(n)] = true
	}
	var b strings.Builder
	failed := false
	for _, c := range h.checks() {
		if exclude[c.name] {
			fmt.Fprintf(&b, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.run(); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.name)
			continue
		}
		fmt.Fprintf(&b, "[+]%s ok\n", c.name)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, b.String()+"healthz check failed\n")
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprint(w, b.String()+"healthz check passed\n")
		return
	}
	fmt.Fprint(w, "ok")
}

// healthzCheck is /healthz/{check}: ok, or 500 with the reason.
func (h *NodeHandler) healthzCheck(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("check")
	for _, c := range h.checks() {
		if c.name != name {
			continue
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := c.run(); err != nil {
			http.Error(w, "internal server error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
		return
	}
	http.NotFound(w, r)
}
