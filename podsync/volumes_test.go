package podsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
)

// look is one scripted answer of a volume wait's Poll.
type look struct {
	done bool
	err  error
}

// scriptedWait answers its looks in order and logs each with the canceled flag it was given.
type scriptedWait struct {
	looks []look
	// now is the clock: a wait that goes on looks again every (300ms when zero) later.
	now   func() time.Time
	every time.Duration
	log   *[]string
}

func (w *scriptedWait) Poll(canceled bool) (time.Time, bool, error) {
	*w.log = append(*w.log, fmt.Sprintf("poll canceled=%v", canceled))
	l := w.looks[0]
	w.looks = w.looks[1:]
	if !l.done {
		return w.now().Add(cmp.Or(w.every, 300*time.Millisecond)), false, nil
	}
	return time.Time{}, true, l.err
}

// scriptedVolumes hands out one scripted wait for each kind; a nil mount wait is a pod without
// volumes.
type scriptedVolumes struct {
	mount, unmount, gone *scriptedWait
	log                  []string
}

func (v *scriptedVolumes) WaitForAttachAndMount(pod *v1.Pod) VolumeWait {
	v.log = append(v.log, "WaitForAttachAndMount "+pod.Name)
	if v.mount == nil {
		return nil
	}
	return v.mount
}

func (v *scriptedVolumes) WaitForUnmount(pod *v1.Pod) VolumeWait {
	v.log = append(v.log, "WaitForUnmount "+pod.Name)
	return v.unmount
}

func (v *scriptedVolumes) WaitForVolumesGone(pod *v1.Pod) VolumeWait {
	v.log = append(v.log, "WaitForVolumesGone "+pod.Name)
	return v.gone
}

// TestSyncPodWaitsForVolumes checks that SyncPod asks the runtime for nothing until the pod's
// volumes are mounted, waits through Result.Wait meanwhile, and records FailedMount only for a
// failure that is not its context's or its timeout's.
func TestSyncPodWaitsForVolumes(t *testing.T) {
	boom := errors.New("unmounted volumes=[creds], unattached volumes=[], failed to process volumes=[]: populator failed")
	for _, tc := range []struct {
		name  string
		looks []look
		// cancelAt is the look, from 1, whose Wait call says the worker's context was cancelled;
		// zero for none.
		cancelAt int
		noWait   bool
		wantErr  error
		// wantLog lists the polls, then the runtime calls, in order.
		wantLog    []string
		wantEvents []string
	}{
		{name: "no volumes", noWait: true, wantLog: []string{"WaitForAttachAndMount web", "SyncPod web"}},
		{name: "mounted at the first look", looks: []look{{done: true}},
			wantLog: []string{"WaitForAttachAndMount web", "poll canceled=false", "SyncPod web"}},
		{name: "mounted at the third look", looks: []look{{}, {}, {done: true}},
			wantLog: []string{"WaitForAttachAndMount web", "poll canceled=false", "poll canceled=false", "poll canceled=false", "SyncPod web"}},
		{name: "the populator failed", looks: []look{{}, {done: true, err: boom}}, wantErr: boom,
			wantLog:    []string{"WaitForAttachAndMount web", "poll canceled=false", "poll canceled=false"},
			wantEvents: []string{"Warning FailedMount Unable to attach or mount volumes: " + boom.Error()}},
		{name: "timed out", looks: []look{{}, {done: true, err: fmt.Errorf("unmounted volumes=[creds]: %w", context.DeadlineExceeded)}}, wantErr: context.DeadlineExceeded,
			wantLog: []string{"WaitForAttachAndMount web", "poll canceled=false", "poll canceled=false"}},
		{name: "cancelled", looks: []look{{}, {done: true, err: fmt.Errorf("unmounted volumes=[creds]: %w", context.Canceled)}}, cancelAt: 2, wantErr: context.Canceled,
			wantLog: []string{"WaitForAttachAndMount web", "poll canceled=false", "poll canceled=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			vols := &scriptedVolumes{}
			if !tc.noWait {
				vols.mount = &scriptedWait{looks: tc.looks, now: f.clk.Now, log: &vols.log}
			}
			f.s.opts.Volumes = vols
			p := pod("web")
			res, err := f.s.SyncPod(context.Background(), podworkers.SyncPodCreate, p, nil, &kubecontainer.PodStatus{UID: p.UID})
			for n := 2; err == nil && res.Wait != nil; n++ {
				if len(f.rt.calls) > 0 {
					t.Fatalf("runtime calls %q while the sync waits for volumes", f.rt.calls)
				}
				if !res.Done.After(f.clk.Now()) {
					t.Fatalf("waiting Result.Done = %v, want after now %v", res.Done, f.clk.Now())
				}
				f.clk.Set(res.Done)
				res, err = res.Wait(context.Background(), n == tc.cancelAt)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("SyncPod error = %v, want %v", err, tc.wantErr)
			}
			got := append(append([]string{}, vols.log...), f.rt.calls...)
			if diff := gocmp.Diff(tc.wantLog, got); diff != "" {
				t.Errorf("polls and runtime calls (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tc.wantEvents, []string(*f.events), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncTerminatedPodWaitsForUnmount checks that SyncTerminatedPod writes the final status at
// once but terminates the pod in the status manager only once its volumes are unmounted.
func TestSyncTerminatedPodWaitsForUnmount(t *testing.T) {
	f := newFixture(t)
	vols := &scriptedVolumes{}
	vols.unmount = &scriptedWait{looks: []look{{}, {done: true}}, now: f.clk.Now, log: &vols.log}
	vols.gone = &scriptedWait{looks: []look{{done: true}}, now: f.clk.Now, log: &vols.log}
	f.s.opts.Volumes = vols
	p := pod("web")
	res, err := f.s.SyncTerminatedPod(context.Background(), p, &kubecontainer.PodStatus{UID: p.UID})
	if err != nil || res.Wait == nil {
		t.Fatalf("SyncTerminatedPod = %+v, %v; want a wait", res, err)
	}
	if _, ok := f.status.statuses[p.UID]; !ok {
		t.Error("no final status written before the wait")
	}
	if len(f.status.terminated) != 0 {
		t.Errorf("TerminatePod called for %v while the volumes are mounted", f.status.terminated)
	}
	f.clk.Set(res.Done)
	if res, err = res.Wait(context.Background(), false); err != nil || res.Wait != nil {
		t.Fatalf("Wait = %+v, %v; want the end of the sync", res, err)
	}
	if diff := gocmp.Diff([]string{"WaitForUnmount web", "poll canceled=false", "poll canceled=false", "WaitForVolumesGone web", "poll canceled=false"}, vols.log); diff != "" {
		t.Errorf("polls (-want +got):\n%s", diff)
	}
	if len(f.status.terminated) != 1 {
		t.Errorf("TerminatePod calls = %v, want one once unmounted", f.status.terminated)
	}
}

// TestSyncTerminatedPodWaitsForUncertain checks SyncTerminatedPod's second poll: a volume a
// restarted kubelet reconstructed as uncertain is not mounted, so WaitForUnmount ends at its first
// look, but it is possibly mounted, so the second poll, started at that moment, waits on its
// 100ms grid, with no error, until the volume is torn down; only then is the pod terminated in
// the status manager.
func TestSyncTerminatedPodWaitsForUncertain(t *testing.T) {
	f := newFixture(t)
	vols := &scriptedVolumes{}
	vols.unmount = &scriptedWait{looks: []look{{done: true}}, now: f.clk.Now, log: &vols.log}
	vols.gone = &scriptedWait{looks: []look{{}, {}, {done: true}}, now: f.clk.Now, every: 100 * time.Millisecond, log: &vols.log}
	f.s.opts.Volumes = vols
	p := pod("web")
	start := f.clk.Now()
	res, err := f.s.SyncTerminatedPod(context.Background(), p, &kubecontainer.PodStatus{UID: p.UID})
	var waits []time.Duration
	for err == nil && res.Wait != nil {
		if len(f.status.terminated) != 0 {
			t.Fatalf("TerminatePod called for %v while a volume is uncertain", f.status.terminated)
		}
		waits = append(waits, res.Done.Sub(start))
		f.clk.Set(res.Done)
		res, err = res.Wait(context.Background(), false)
	}
	if err != nil {
		t.Fatalf("SyncTerminatedPod: %v", err)
	}
	if diff := gocmp.Diff([]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, waits); diff != "" {
		t.Errorf("looks of the second poll (-want +got):\n%s", diff)
	}
	want := []string{"WaitForUnmount web", "poll canceled=false", "WaitForVolumesGone web", "poll canceled=false", "poll canceled=false", "poll canceled=false"}
	if diff := gocmp.Diff(want, vols.log); diff != "" {
		t.Errorf("polls (-want +got):\n%s", diff)
	}
	if len(f.status.terminated) != 1 {
		t.Errorf("TerminatePod calls = %v, want one once no volume is possibly mounted", f.status.terminated)
	}
}
