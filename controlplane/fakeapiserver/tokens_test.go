package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestTokenVolume checks the ServiceAccount admission plugin's token volume: its shape, the
// mount in every container and init container, and the cases that get none.
func TestTokenVolume(t *testing.T) {
	f := newFixture(t, testOptions())
	ctx := context.Background()
	pod := newPod("default", "web", "")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1.36"}}
	got := f.createPod(t, pod)
	if len(got.Spec.Volumes) != 1 || !strings.HasPrefix(got.Spec.Volumes[0].Name, "kube-api-access-") || len(got.Spec.Volumes[0].Name) != len("kube-api-access-")+5 {
		t.Fatalf("volumes = %+v, want one kube-api-access-<5 characters>", got.Spec.Volumes)
	}
	name := got.Spec.Volumes[0].Name
	wantSource := &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](420),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}
	if diff := cmp.Diff(wantSource, got.Spec.Volumes[0].Projected); diff != "" {
		t.Errorf("token volume (-want +got):\n%s", diff)
	}
	wantMount := []corev1.VolumeMount{{Name: name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	for _, c := range append(got.Spec.InitContainers, got.Spec.Containers...) {
		if diff := cmp.Diff(wantMount, c.VolumeMounts); diff != "" {
			t.Errorf("mounts of %s (-want +got):\n%s", c.Name, diff)
		}
	}

	for _, tc := range []struct {
		name   string
		change func(pod *corev1.Pod)
	}{
		{"pod opts out", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) }},
		{"own mount at the path", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "mine", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPod("default", strings.ReplaceAll(tc.name, " ", "-"), "")
			tc.change(p)
			got := f.createPod(t, p)
			for _, v := range got.Spec.Volumes {
				if strings.HasPrefix(v.Name, "kube-api-access-") {
					t.Errorf("volumes = %+v, want no token volume", got.Spec.Volumes)
				}
			}
		})
	}

	sa, err := f.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa.AutomountServiceAccountToken = ptr.To(false)
	if _, err := f.client.CoreV1().ServiceAccounts("default").Update(ctx, sa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := f.createPod(t, newPod("default", "sa-opts-out", "")); len(got.Spec.Volumes) != 0 {
		t.Errorf("volumes of a pod whose service account opts out = %+v, want none", got.Spec.Volumes)
	}
}

// TestRootCAConfigMap checks that every namespace gets kube-root-ca.crt, that it comes back when
// deleted, and that PublishRootCA fills it.
func TestRootCAConfigMap(t *testing.T) {
	f := newFixture(t, testOptions())
	ctx := context.Background()
	f.createNamespace(t, "team")
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease", "team"} {
		cm, err := f.client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			t.Errorf("get %s/kube-root-ca.crt = %v", ns, err)
			continue
		}
		if _, ok := cm.Data["ca.crt"]; !ok || cm.Annotations["kubernetes.io/description"] == "" {
			t.Errorf("%s/kube-root-ca.crt = %+v, want ca.crt and a description", ns, cm)
		}
	}
	if err := f.client.CoreV1().ConfigMaps("team").Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CoreV1().ConfigMaps("team").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
		t.Errorf("get team/kube-root-ca.crt after its delete = %v, want it published again", err)
	}
	if err := f.srv.PublishRootCA([]byte("-----BEGIN CERTIFICATE-----\n")); err != nil {
		t.Fatal(err)
	}
	cm, err := f.client.CoreV1().ConfigMaps("team").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil || cm.Data["ca.crt"] != "-----BEGIN CERTIFICATE-----\n" {
		t.Errorf("team/kube-root-ca.crt after PublishRootCA = %+v, %v, want the CA", cm, err)
	}
}

// TestTokenRequest checks serviceaccounts/token: a token bound to a pod, with the default
// audience and the expiry asked for, and the refusals of TokenREST.
func TestTokenRequest(t *testing.T) {
	f := newFixture(t, testOptions())
	ctx := context.Background()
	pod := f.createPod(t, newPod("default", "web", "node-1"))
	sas := f.client.CoreV1().ServiceAccounts("default")
	bound := func(mutate func(*authenticationv1.TokenRequest)) *authenticationv1.TokenRequest {
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To[int64](3607),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: pod.UID},
		}}
		if mutate != nil {
			mutate(tr)
		}
		return tr
	}
	got, err := sas.CreateToken(ctx, "default", bound(nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateToken() = %v", err)
	}
	if got.Status.Token == "" || strings.Count(got.Status.Token, ".") != 2 {
		t.Errorf("token = %q, want a JWT", got.Status.Token)
	}
	if want := start.Add(3607 * time.Second); !got.Status.ExpirationTimestamp.Time.Equal(want) {
		t.Errorf("expirationTimestamp = %v, want %v", got.Status.ExpirationTimestamp.Time, want)
	}
	if diff := cmp.Diff([]string{"https://kubernetes.default.svc.cluster.local"}, got.Spec.Audiences); diff != "" {
		t.Errorf("audiences (-want +got):\n%s", diff)
	}
	if got.Name != "default" || got.Namespace != "default" || got.UID == "" {
		t.Errorf("metadata = %+v, want the service account's name, namespace and UID", got.ObjectMeta)
	}
	again, err := sas.CreateToken(ctx, "default", bound(nil), metav1.CreateOptions{})
	if err != nil || again.Status.Token != got.Status.Token {
		t.Errorf("the same request at the same instant = %v, %v, want the same token", again, err)
	}

	for _, tc := range []struct {
		name    string
		sa      string
		mutate  func(*authenticationv1.TokenRequest)
		check   func(error) bool
		message string
	}{
		{"too short", "default", func(tr *authenticationv1.TokenRequest) { tr.Spec.ExpirationSeconds = ptr.To[int64](60) },
			apierrors.IsInvalid, "may not specify a duration less than 10 minutes"},
		{"no such service account", "builder", nil, apierrors.IsNotFound, `serviceaccounts "builder" not found`},
		{"no such pod", "default", func(tr *authenticationv1.TokenRequest) { tr.Spec.BoundObjectRef.Name = "gone" },
			apierrors.IsNotFound, `pods "gone" not found`},
		{"recreated pod", "default", func(tr *authenticationv1.TokenRequest) { tr.Spec.BoundObjectRef.UID = "other" },
			apierrors.IsConflict, "does not match the UID in record"},
		{"bound to a node", "default", func(tr *authenticationv1.TokenRequest) { tr.Spec.BoundObjectRef.Kind = "Node" },
			apierrors.IsBadRequest, "cannot bind token to object of type /v1, Kind=Node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sas.CreateToken(ctx, tc.sa, bound(tc.mutate), metav1.CreateOptions{})
			if !tc.check(err) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("CreateToken() = %v, want an error with %q", err, tc.message)
			}
		})
	}
}
