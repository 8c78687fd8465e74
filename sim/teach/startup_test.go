package teach

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestExplainStartUp checks the start-up's narration: in the start-up lesson's scenario it names
// the kubelet's start-up functions in the kubelet's order, one line each; in any other scenario
// it is one paragraph before the first step.
func TestExplainStartUp(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	explain := func(name string) string {
		t.Helper()
		s, err := c.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Explain(&out, s, res); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}

	full := explain("kubelet-start-up")
	start := strings.Index(full, "Start-up at 0s.")
	end := strings.Index(full, "Step 1 ")
	if start < 0 || end < start {
		t.Fatalf("kubelet-start-up: no start-up paragraph before step 1:\n%s", full)
	}
	para := full[start:end]
	at := 0
	for _, fn := range []string{"NewMainKubelet", "makePodSourceConfig", "BirthCry", "Kubelet.Run", "initializeModules",
		"updateRuntimeUp", "fastStatusUpdateOnce", "status manager", "(PLEG) starts", "syncLoop", "initializeRuntimeDependentModules",
		"plugin manager", "syncNodeStatus", "skips pod synchronization", "PLEG has relisted",
		"dispatches what it held back", "at 100ms: registerWithAPIServer", "Ready=True"} {
		i := strings.Index(para[at:], fn)
		if i < 0 {
			t.Fatalf("kubelet-start-up: %q missing or out of order after %q in:\n%s", fn, para[:at], para)
		}
		at += i + len(fn)
	}
	if n := strings.Count(para, "\n  - "); n < 12 {
		t.Errorf("kubelet-start-up: the start-up has %d lines, want one per event:\n%s", n, para)
	}

	short := explain("static-pod-lifecycle")
	start = strings.Index(short, "Start-up at 0s.")
	end = strings.Index(short, "Step 1 ")
	if start < 0 || end < start {
		t.Fatalf("static-pod-lifecycle: no start-up paragraph before step 1:\n%s", short)
	}
	para = strings.TrimSpace(short[start:end])
	if strings.Contains(para, "\n\n") || strings.Contains(para, "\n  - ") {
		t.Errorf("static-pod-lifecycle: the start-up is not one paragraph:\n%s", para)
	}
	for _, want := range []string{"file and api sources", "\"Starting kubelet.\"", "initializeModules", "syncLoop", "registers at 100ms", "dispatches from 0s"} {
		if !strings.Contains(strings.Join(strings.Fields(para), " "), want) {
			t.Errorf("static-pod-lifecycle: the start-up paragraph lacks %q:\n%s", want, para)
		}
	}
}
