package fakeapiserver_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestPodAdmission creates pods through client-go and checks what kube-apiserver's default
// admission plugins make of them: service account (which must exist, and whose image pull
// secrets the pod gets), priority and default tolerations.
func TestPodAdmission(t *testing.T) {
	defaultTolerations := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	for _, tc := range []struct {
		name            string
		serviceAccount  *corev1.ServiceAccount // created first
		mutate          func(*corev1.Pod)
		wantSA          string
		wantPullSecrets []corev1.LocalObjectReference
		wantPriority    int32
		wantTolerations []corev1.Toleration
		wantErr         string
	}{
		{name: "plain", wantSA: "default", wantTolerations: defaultTolerations},
		{
			name: "own service account",
			serviceAccount: &corev1.ServiceAccount{
				ObjectMeta:       metav1.ObjectMeta{Name: "builder"},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
			},
			mutate: func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" },
			wantSA: "builder", wantTolerations: defaultTolerations,
			wantPullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
		},
		{
			name:    "missing service account",
			mutate:  func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" },
			wantErr: `pods "p" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found`,
		},
		{
			name:   "node critical",
			mutate: func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" },
			wantSA: "default", wantPriority: 2000001000, wantTolerations: defaultTolerations,
		},
		{
			name:   "cluster critical",
			mutate: func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-cluster-critical" },
			wantSA: "default", wantPriority: 2000000000, wantTolerations: defaultTolerations,
		},
		{
			name:    "unknown priority class",
			mutate:  func(p *corev1.Pod) { p.Spec.PriorityClassName = "gold" },
			wantErr: `pods "p" is forbidden: no PriorityClass with name gold was found`,
		},
		{
			name:    "priority given",
			mutate:  func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](7) },
			wantErr: `pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`,
		},
		{
			name: "tolerates unreachable already",
			mutate: func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}}
			},
			wantSA: "default",
			wantTolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists},
				defaultTolerations[0],
			},
		},
		{
			name:            "tolerates everything",
			mutate:          func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} },
			wantSA:          "default",
			wantTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
		{
			name: "mirror pod",
			mutate: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc"}
			},
			wantTolerations: defaultTolerations,
		},
		{
			name: "mirror pod naming a service account",
			mutate: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc"}
				p.Spec.ServiceAccountName = "default"
			},
			wantErr: `pods "p" is forbidden: a mirror pod may not reference service accounts`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, fakeapiserver.Options{})
			if tc.serviceAccount != nil {
				if _, err := f.client.CoreV1().ServiceAccounts("default").Create(context.Background(), tc.serviceAccount, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			pod := newPod("default", "p", "node-1")
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			got, err := f.client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Fatalf("Create() = %v, want Forbidden %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.ServiceAccountName != tc.wantSA {
				t.Errorf("serviceAccountName = %q, want %q", got.Spec.ServiceAccountName, tc.wantSA)
			}
			if got.Spec.Priority == nil || *got.Spec.Priority != tc.wantPriority {
				t.Errorf("priority = %v, want %d", got.Spec.Priority, tc.wantPriority)
			}
			if got.Spec.PreemptionPolicy == nil || *got.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
				t.Errorf("preemptionPolicy = %v, want PreemptLowerPriority", got.Spec.PreemptionPolicy)
			}
			if got.Spec.EnableServiceLinks == nil || !*got.Spec.EnableServiceLinks {
				t.Errorf("enableServiceLinks = %v, want true", got.Spec.EnableServiceLinks)
			}
			if diff := cmp.Diff(tc.wantTolerations, got.Spec.Tolerations); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPullSecrets, got.Spec.ImagePullSecrets); diff != "" {
				t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
			}

			// An update that leaves out what admission added keeps the priority and gets the
			// default tolerations again, as the Priority and DefaultTolerationSeconds plugins do.
			upd := got.DeepCopy()
			upd.Spec.Priority, upd.Spec.PreemptionPolicy, upd.Spec.Tolerations = nil, nil, nil
			upd.Labels["changed"] = "yes"
			if tc.name == "plain" {
				after, err := f.client.CoreV1().Pods("default").Update(context.Background(), upd, metav1.UpdateOptions{})
				if err != nil {
					t.Fatalf("Update() without the admitted fields = %v", err)
				}
				if *after.Spec.Priority != 0 || len(after.Spec.Tolerations) != 2 {
					t.Errorf("after update priority = %v, tolerations = %v", after.Spec.Priority, after.Spec.Tolerations)
				}
			}
		})
	}
}
