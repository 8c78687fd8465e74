package kubelet

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/world"
)

// startLine is a start-up event as the tests compare it.
type startLine struct {
	Component trace.Component
	Event     trace.Kind
	Func      string
	Delay     time.Duration
	Message   string
}

// startLines keeps the kubelet's start-up events of evs, the BirthCry, and the milestones its
// loops reach (registration, the PLEG's health, the sync loop's skip and resume, the plugin
// pipeline's start), in order.
func startLines(evs []trace.Event) []startLine {
	var out []startLine
	for _, e := range evs {
		keep := e.Component == trace.Kubelet ||
			(e.Component == trace.Events && e.Reason == "Starting") ||
			(e.Component == trace.Node && e.Event == trace.KindRegister) ||
			(e.Component == trace.PLEG && e.Event == trace.KindHealth) ||
			(e.Component == trace.SyncLoop && (e.Event == trace.KindSkip || e.Event == trace.KindResume || (e.Event == trace.KindError && e.Reason == "RuntimeStatus"))) ||
			(e.Component == trace.DeviceManager && e.Event == trace.KindRestored) ||
			(e.Component == trace.PluginWatcher && e.Event == trace.KindAdd)
		if !keep {
			continue
		}
		l := startLine{Component: e.Component, Event: e.Event, Func: e.Func, Delay: e.Delay}
		if e.Component == trace.Kubelet || e.Component == trace.Events {
			l.Message = e.Message
		}
		out = append(out, l)
	}
	return out
}

// kubeletLine is one line of the kubelet component.
func kubeletLine(kind trace.Kind, fn string, delay time.Duration, msg string) startLine {
	return startLine{Component: trace.Kubelet, Event: kind, Func: fn, Delay: delay, Message: msg}
}

var (
	birthCryLine = startLine{Component: trace.Events, Event: trace.KindNormal, Message: "Starting kubelet."}
	healthyLine  = startLine{Component: trace.PLEG, Event: trace.KindHealth, Func: "Healthy"}
	skipLine     = startLine{Component: trace.SyncLoop, Event: trace.KindSkip, Func: "syncLoop"}
	resumeLine   = startLine{Component: trace.SyncLoop, Event: trace.KindResume, Func: "syncLoop"}
)

// standaloneStartUp is the start-up of a kubelet without an API server or plugins, up to the
// runtime-dependent modules: no node status loop, fast status poll or status manager.
var standaloneStartUp = []startLine{
	kubeletLine(trace.KindNew, "NewMainKubelet", 0, ""),
	kubeletLine(trace.KindSources, "makePodSourceConfig", 0, "file"),
	birthCryLine,
	kubeletLine(trace.KindRun, "Run", 0, ""),
	kubeletLine(trace.KindModules, "initializeModules", 0, ""),
	kubeletLine(trace.KindRuntimeUp, "updateRuntimeUp", 5*time.Second, ""),
	kubeletLine(trace.KindPLEG, "GenericPLEG.Start", time.Second, ""),
	kubeletLine(trace.KindSyncLoopStart, "syncLoop", 0, ""),
	kubeletLine(trace.KindRuntimeModules, "initializeRuntimeDependentModules", 0, ""),
}

// TestStartUpOrder checks the start-up's trace, in the kubelet's order (the v1.35 kubelet's
// NewMainKubelet, Kubelet.Run and its timeline): NewMainKubelet and makePodSourceConfig, the
// BirthCry, then Run's modules, updateRuntimeUp's first check, the fastStatusUpdateOnce poll,
// the status manager, the PLEG and the sync loop; after them the check's goroutine runs the
// runtime-dependent modules with the plugin pipeline and starts the node status loop; then what
// those loops do in the first pass. Without an API
// server the node status loop, the poll and the status manager do not start, and the first
// runtime check is the 5s loop's.
func TestStartUpOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    envOptions
		want []startLine
	}{{
		name: "with an API server and plugins",
		o:    envOptions{plugins: world.NewPlugins("/var/lib/kubelet/plugins_registry")},
		want: []startLine{
			kubeletLine(trace.KindNew, "NewMainKubelet", 0, ""),
			kubeletLine(trace.KindSources, "makePodSourceConfig", 0, "file api"),
			birthCryLine,
			kubeletLine(trace.KindRun, "Run", 0, ""),
			kubeletLine(trace.KindModules, "initializeModules", 0, ""),
			kubeletLine(trace.KindRuntimeUp, "updateRuntimeUp", 5*time.Second, ""),
			kubeletLine(trace.KindFastStatus, "fastStatusUpdateOnce", 100*time.Millisecond, ""),
			kubeletLine(trace.KindStatusManager, "statusManager.Start", 10*time.Second, ""),
			kubeletLine(trace.KindPLEG, "GenericPLEG.Start", time.Second, ""),
			kubeletLine(trace.KindSyncLoopStart, "syncLoop", 0, ""),
			kubeletLine(trace.KindRuntimeModules, "initializeRuntimeDependentModules", 0, registerapi.CSIPlugin+" "+registerapi.DevicePlugin+" "+registerapi.DRAPlugin),
			kubeletLine(trace.KindNodeStatus, "syncNodeStatus", 10*time.Second, ""),
			// Registration sleeps 100ms before its first attempt: not in this instant.
			skipLine, healthyLine, resumeLine,
		},
	}, {
		name: "standalone",
		o:    envOptions{standalone: true},
		want: append(slices.Clone(standaloneStartUp), skipLine, healthyLine, resumeLine),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.o)
			e.settle()
			if diff := cmp.Diff(tc.want, startLines(e.trace())); diff != "" {
				t.Errorf("start-up (-want +got):\n%s", diff)
			}
			if got := e.events.list(); len(got) == 0 || got[0] != "Normal Starting Starting kubelet." {
				t.Errorf("Kubernetes events = %q, want the BirthCry first", got)
			}
		})
	}
}

// TestStartUpWaitsForTheRuntime starts a kubelet whose runtime does not answer for its first 12s:
// the first check fails, and the runtime-dependent modules (the plugin pipeline among them) start
// only at the first check the runtime answers, the 5s loop's at 15s, as the kubelet's
// oneTimeInitializer waits for it; the sync loop resumes after them, though the PLEG relisted
// before.
func TestStartUpWaitsForTheRuntime(t *testing.T) {
	plugins := world.NewPlugins("/var/lib/kubelet/plugins_registry")
	e := newEnv(t, envOptions{standalone: true, plugins: plugins})
	rt, err := fakeruntime.New(fakeruntime.Options{Clock: e.clk, Tracer: e.rec})
	if err != nil {
		t.Fatal(err)
	}
	rt.Down(e.clk.Now().Add(12 * time.Second))
	plugins.Create("gpu.sock", world.PluginSpec{Type: registerapi.DevicePlugin, Name: "example.com/gpu", Versions: []string{"v1beta1"}, Devices: 1})
	e.opts.World.Runtime = rt
	if e.k, err = New(e.opts); err != nil {
		t.Fatal(err)
	}
	mark := e.rec.Len()
	e.runFor(16 * time.Second)
	var got []startLine
	var at []time.Duration
	for _, ev := range e.rec.EventsSince(mark) {
		for _, l := range startLines([]trace.Event{ev}) {
			if l.Component == trace.Kubelet && (l.Event == trace.KindRun || l.Event == trace.KindModules) {
				continue
			}
			got, at = append(got, l), append(at, ev.T)
		}
	}
	runtimeStatus := startLine{Component: trace.SyncLoop, Event: trace.KindError, Func: "updateRuntimeUp"}
	want := []startLine{
		runtimeStatus,
		kubeletLine(trace.KindPLEG, "GenericPLEG.Start", time.Second, ""),
		kubeletLine(trace.KindSyncLoopStart, "syncLoop", 0, ""),
		skipLine,
		runtimeStatus, // at 5s
		runtimeStatus, // at 10s
		healthyLine,   // the first relist after the runtime is back, at 12s
		kubeletLine(trace.KindRuntimeUp, "updateRuntimeUp", 5*time.Second, ""),
		kubeletLine(trace.KindRuntimeModules, "initializeRuntimeDependentModules", 0, registerapi.DevicePlugin+" "+registerapi.DRAPlugin),
		{Component: trace.PluginWatcher, Event: trace.KindAdd, Func: "handlePluginRegistration"},
		resumeLine, // the runtime check passes from now on
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("start-up with the runtime down (-want +got):\n%s", diff)
	}
	if up := at[7]; up != 15*time.Second {
		t.Errorf("runtime-up at %v, want 15s: the first check the runtime answers", up)
	}
}

// TestRunTracesTheStartUp checks that Run traces the same start-up as a stepping driver's first
// Settle, before its runners start: a kubelet on the real clock whose context is already done.
func TestRunTracesTheStartUp(t *testing.T) {
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clock.RealClock{}, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Sources.StaticPodPath = t.TempDir()
	k, err := New(Options{NodeName: testNode, Config: cfg, Clock: clock.RealClock{}, Tracer: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := k.Run(ctx, RunOptions{}); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	var got []startLine
	for _, l := range startLines(rec.Events()) {
		if l.Component == trace.Kubelet || l.Component == trace.Events {
			got = append(got, l)
		}
	}
	want := standaloneStartUp
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run's start-up (-want +got):\n%s", diff)
	}
}
