package replay

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

func (s *Scenario) validate(maxDuration time.Duration) error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, errors.New("name is required"))
	}
	switch {
	case len(s.Nodes) > 0 && s.Node != "":
		errs = append(errs, errors.New("node and nodes exclude each other: name the one node in nodes"))
	case len(s.Nodes) > 0:
		s.Node = s.Nodes[0]
	case s.Node == "":
		s.Node = "node-1"
	}
	names := map[string]bool{}
	for _, n := range s.nodeNames() {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("node %q: %s, as the kubelet's node name must be", n, strings.Join(msgs, "; ")))
		}
		if names[n] {
			errs = append(errs, fmt.Errorf("nodes: %q is listed twice", n))
		}
		names[n] = true
	}
	seen := map[string]bool{}
	for _, src := range s.Sources {
		switch src {
		case "file", "http", "api":
		default:
			errs = append(errs, fmt.Errorf("sources: unknown pod source %q: want file, http or api", src))
		}
		if seen[src] {
			errs = append(errs, fmt.Errorf("sources: %q is listed twice", src))
		}
		seen[src] = true
	}
	for _, f := range []struct {
		name string
		d    *Duration
	}{{"syncFrequency", s.SyncFrequency}, {"fileCheckFrequency", s.FileCheckFrequency}, {"httpCheckFrequency", s.HTTPCheckFrequency}} {
		if f.d != nil && f.d.Duration <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", f.name))
		}
	}
	if err := s.validateBounds(); err != nil {
		errs = append(errs, err)
	}
	if err := s.validateSettings(); err != nil {
		errs = append(errs, err)
	}
	if err := s.validateControlPlane(); err != nil {
		errs = append(errs, err)
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		if i > 0 && st.At.Duration < s.Steps[i-1].At.Duration {
			errs = append(errs, fmt.Errorf("step %d (at %v): steps must be in non-decreasing order of at, but step %d is at %v",
				i+1, st.At.Duration, i, s.Steps[i-1].At.Duration))
		}
		var nodeErr error
		switch {
		case st.Node != "" && !names[st.Node]:
			nodeErr = fmt.Errorf("node %q is not one of the scenario's nodes %v", st.Node, s.nodeNames())
		case len(names) > 1 && st.usesPlugins():
			nodeErr = errors.New("plugin steps need a scenario with one node: only a single node runs the plugin pipeline")
		}
		if err := errors.Join(st.validate(seen), st.bound(maxDuration), nodeErr); err != nil {
			errs = append(errs, fmt.Errorf("step %d (at %v): %w", i+1, st.At.Duration, err))
		}
	}
	return errors.Join(errs...)
}

func required(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is required", field)
	}
	return nil
}

func podKey(key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("pod %q: want namespace/name", key)
	}
	return nil
}
