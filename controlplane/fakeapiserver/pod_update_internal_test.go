package fakeapiserver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
)

func TestPreparePodUpdate(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Generation: 1},
			Spec: corev1.PodSpec{
				Containers:            []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
				InitContainers:        []corev1.Container{{Name: "init", Image: "busybox:1.36"}},
				ActiveDeadlineSeconds: i64(100),
				Tolerations:           []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(30)}},
				SchedulingGates:       []corev1.PodSchedulingGate{{Name: "a"}, {Name: "b"}},
			},
		}
	}
	tests := []struct {
		name    string
		change  func(*corev1.Pod)
		wantErr string // a substring of the first error; empty for accepted
	}{
		{name: "image", change: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }},
		{name: "init image", change: func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "busybox:1.37" }},
		{name: "empty image", change: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, wantErr: "spec.containers[0].image: Required value"},
		{name: "image with spaces", change: func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" }, wantErr: "must not have leading or trailing whitespace"},
		{name: "container added", change: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "x"})
		}, wantErr: "spec.containers: Forbidden: pod updates may not add or remove containers"},
		{name: "deadline lowered", change: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = i64(50) }},
		{name: "deadline raised", change: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = i64(200) }, wantErr: "must be less than or equal to previous value"},
		{name: "deadline removed", change: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = nil }, wantErr: "must not update from a positive integer to nil value"},
		{name: "toleration added", change: func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
		}},
		{name: "tolerationSeconds changed", change: func(p *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = i64(60) }},
		{name: "toleration removed", change: func(p *corev1.Pod) { p.Spec.Tolerations = nil }, wantErr: "existing toleration can not be modified except its tolerationSeconds"},
		{name: "gate removed", change: func(p *corev1.Pod) { p.Spec.SchedulingGates = p.Spec.SchedulingGates[1:] }},
		{name: "gate added", change: func(p *corev1.Pod) {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "c"})
		}, wantErr: "only deletion is allowed, but found new scheduling gate 'c'"},
		{name: "resources", change: func(p *corev1.Pod) { p.Spec.Containers[0].Command = []string{"sh"} },
			wantErr: "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := base()
			apidefaults.SetPodDefaults(old) // as stored
			next := base()
			tt.change(next)
			errs := preparePodUpdate(old, next)
			if tt.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("preparePodUpdate() = %v, want accepted", errs)
				}
				if next.Generation != 2 {
					t.Errorf("generation = %d, want 2", next.Generation)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.wantErr) {
				t.Errorf("preparePodUpdate() = %v, want an error containing %q", errs, tt.wantErr)
			}
		})
	}
}
