package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// FailVolumeOperation makes the next Times SetUps (first mounts) or TearDowns of a pod's
// volume fail, as the node's mounter failing under the volume plugin would: the volume manager
// sees the plugin's error, "scripted SetUp failure" or "scripted TearDown failure".
type FailVolumeOperation struct {
	Pod    string `json:"pod"`
	Volume string `json:"volume"`
	// Operation is setUp or tearDown.
	Operation string `json:"operation"`
	Times     int    `json:"times"`
}

var (
	_ change   = (*FailVolumeOperation)(nil)
	_ podNamer = (*FailVolumeOperation)(nil)
)

func (f *FailVolumeOperation) pod() string { return f.Pod }

func (f *FailVolumeOperation) validate() error {
	errs := []error{podKey(f.Pod)}
	if f.Volume == "" {
		errs = append(errs, errors.New("failVolumeOperation.volume is required"))
	} else if msgs := validation.IsDNS1123Label(f.Volume); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("failVolumeOperation.volume %q: %s, as a pod's volume name must be", f.Volume, strings.Join(msgs, "; ")))
	}
	if !slices.Contains(kubelet.VolumeOperations(), kubelet.VolumeOperation(f.Operation)) {
		var want []string
		for _, op := range kubelet.VolumeOperations() {
			want = append(want, string(op))
		}
		errs = append(errs, fmt.Errorf("failVolumeOperation.operation %q: want %s", f.Operation, strings.Join(want, " or ")))
	}
	if f.Times < 1 {
		errs = append(errs, errors.New("failVolumeOperation.times must be positive"))
	}
	return errors.Join(errs...)
}

// apply scripts the failures on the node's volume plugins. The pod must be in the node's pod
// manager and have the volume: a script for a volume no pod has would never fail anything. The
// script names the pod by the UID it has now, so a later pod of the same name (another UID) does
// not inherit a failure this one never used up; the UID survives a kubelet restart, as the
// script does, which belongs to the node. A hostPath or image volume is refused: in v1.35 its
// SetUp and its TearDown never reach the node's mounter, so they cannot fail this way.
func (f *FailVolumeOperation) apply(_ context.Context, e *engine, n *node) {
	op, what := kubelet.VolumeSetUp, "mounts"
	if f.Operation == string(kubelet.VolumeTearDown) {
		op, what = kubelet.VolumeTearDown, "TearDowns"
	}
	e.stepEvent(trace.KindFailVolumeOperation, f.Pod, fmt.Sprintf("the next %d %s of volume %s fail", f.Times, what, f.Volume))
	ns, name, _ := strings.Cut(f.Pod, "/")
	pod, ok := n.kubelet.Pods.GetPodByName(ns, name)
	if !ok {
		e.stepError(trace.KindFailVolumeOperation, fmt.Errorf("fail volume operation: no pod %s on node %s%s", f.Pod, n.name, n.unknownPodHint(f.Pod)))
		return
	}
	var names []string
	for _, v := range pod.Spec.Volumes {
		if kind := neverMounted(v.VolumeSource); v.Name == f.Volume && kind != "" {
			e.stepError(trace.KindFailVolumeOperation, fmt.Errorf("fail volume operation: pod %s volume %q is %s volume, whose %s never reaches the node's mounter", f.Pod, f.Volume, kind, op))
			return
		}
		names = append(names, v.Name)
	}
	if !slices.Contains(names, f.Volume) {
		has := "none"
		if len(names) > 0 {
			has = strings.Join(names, ", ")
		}
		e.stepError(trace.KindFailVolumeOperation, fmt.Errorf("fail volume operation: pod %s has no volume %q (its volumes: %s)", f.Pod, f.Volume, has))
		return
	}
	if err := n.volumeFaults.Script(pod.UID, f.Volume, op, f.Times); err != nil {
		e.stepError(trace.KindFailVolumeOperation, fmt.Errorf("fail volume operation: pod %s: %w", f.Pod, err))
	}
}

// neverMounted names the kind of a volume whose v1.35 plugin never reaches the node's mounter,
// with its article ("a hostPath"), or "" for any other: hostPath's TearDown does nothing and its
// SetUp only checks the path's type; the image plugin's SetUpAt and TearDownAt do nothing (the
// runtime mounts the image).
func neverMounted(src v1.VolumeSource) string {
	switch {
	case src.HostPath != nil:
		return "a hostPath"
	case src.Image != nil:
		return "an image"
	}
	return ""
}
