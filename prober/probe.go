package prober

import (
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ProbeType is the kind of a probe.
type ProbeType int

// The probe types, in the order the kubelet creates their workers for a container.
const (
	Liveness ProbeType = iota
	Readiness
	Startup
)

// ProbeTypes lists every probe type.
var ProbeTypes = []ProbeType{Liveness, Readiness, Startup}

// String is the kubelet's name of the type, as its events show it: "Liveness", "Readiness",
// "Startup". An out-of-range value prints as "ProbeType(n)".
func (t ProbeType) String() string {
	switch t {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "ProbeType(" + strconv.Itoa(int(t)) + ")"
}

// Name is the lowercase name used in traces, scenario steps and annotations: "liveness",
// "readiness", "startup".
func (t ProbeType) Name() string { return strings.ToLower(t.String()) }

// ParseProbeType parses a Name.
func ParseProbeType(s string) (ProbeType, bool) {
	for _, t := range ProbeTypes {
		if t.Name() == s {
			return t, true
		}
	}
	return 0, false
}

// spec returns the container's probe of the type, or nil.
func (t ProbeType) spec(c *v1.Container) *v1.Probe {
	switch t {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// period returns the probe's ticker period. The API server defaults periodSeconds to 10; a static
// pod's manifest decoder does too. A zero left by a caller that skipped defaulting is taken as the
// default rather than as a ticker that never fires.
func period(p *v1.Probe) time.Duration {
	if p.PeriodSeconds <= 0 {
		return 10 * time.Second
	}
	return time.Duration(p.PeriodSeconds) * time.Second
}

// threshold returns n, or the API default def when n was left zero.
func threshold(n, def int32) int {
	if n <= 0 {
		return int(def)
	}
	return int(n)
}
