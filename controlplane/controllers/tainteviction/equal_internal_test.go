package tainteviction

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// taintsEqual and tolerationsEqual answer as the Semantic.DeepEqual the real controller uses.
func TestEqualAsSemantic(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sameAt := metav1.NewTime(at.In(time.FixedZone("x", 3600)))
	later := metav1.NewTime(at.Add(time.Second))
	taint := v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute, TimeAdded: &at}
	with := func(f func(*v1.Taint)) v1.Taint { c := taint; f(&c); return c }
	taints := []struct {
		name string
		a, b []v1.Taint
	}{
		{"nil and empty", nil, []v1.Taint{}},
		{"same", []v1.Taint{taint}, []v1.Taint{taint}},
		{"time in another zone", []v1.Taint{taint}, []v1.Taint{with(func(t *v1.Taint) { t.TimeAdded = &sameAt })}},
		{"later", []v1.Taint{taint}, []v1.Taint{with(func(t *v1.Taint) { t.TimeAdded = &later })}},
		{"no time", []v1.Taint{taint}, []v1.Taint{with(func(t *v1.Taint) { t.TimeAdded = nil })}},
		{"value", []v1.Taint{taint}, []v1.Taint{with(func(t *v1.Taint) { t.Value = "x" })}},
		{"key", []v1.Taint{taint}, []v1.Taint{with(func(t *v1.Taint) { t.Key = v1.TaintNodeNotReady })}},
		{"one more", []v1.Taint{taint}, []v1.Taint{taint, taint}},
	}
	for _, tt := range taints {
		if got, want := taintsEqual(tt.a, tt.b), equality.Semantic.DeepEqual(tt.a, tt.b); got != want {
			t.Errorf("taintsEqual, %s = %v, want %v", tt.name, got, want)
		}
	}
	tol := v1.Toleration{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	withT := func(f func(*v1.Toleration)) v1.Toleration { c := tol; f(&c); return c }
	shared := []v1.Toleration{tol}
	tolerations := []struct {
		name string
		a, b []v1.Toleration
	}{
		{"nil and empty", nil, []v1.Toleration{}},
		{"shared", shared, shared},
		{"same values", []v1.Toleration{tol}, []v1.Toleration{withT(func(t *v1.Toleration) { t.TolerationSeconds = ptr.To[int64](300) })}},
		{"other seconds", []v1.Toleration{tol}, []v1.Toleration{withT(func(t *v1.Toleration) { t.TolerationSeconds = ptr.To[int64](30) })}},
		{"no seconds", []v1.Toleration{tol}, []v1.Toleration{withT(func(t *v1.Toleration) { t.TolerationSeconds = nil })}},
		{"operator", []v1.Toleration{tol}, []v1.Toleration{withT(func(t *v1.Toleration) { t.Operator = v1.TolerationOpEqual })}},
		{"value", []v1.Toleration{tol}, []v1.Toleration{withT(func(t *v1.Toleration) { t.Value = "x" })}},
		{"effect", []v1.Toleration{tol}, []v1.Toleration{withT(func(t *v1.Toleration) { t.Effect = "" })}},
		{"order", []v1.Toleration{tol, withT(func(t *v1.Toleration) { t.Key = "k" })}, []v1.Toleration{withT(func(t *v1.Toleration) { t.Key = "k" }), tol}},
	}
	for _, tt := range tolerations {
		if got, want := tolerationsEqual(tt.a, tt.b), equality.Semantic.DeepEqual(tt.a, tt.b); got != want {
			t.Errorf("tolerationsEqual, %s = %v, want %v", tt.name, got, want)
		}
	}
}
