package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestDeployRoleGrantsTheFleetsRequests runs a fleet of two nodes with an API pod that mounts
// a ConfigMap, reads a Secret and gets its service account token, and a static pod, and checks
// that docs/examples/deploy's ClusterRole grants every request the fleet made, by verb, group,
// resource and subresource. The fake API server authorizes nothing; kube-apiserver with RBAC
// refuses what the role leaves out, and a node that cannot create its CSINode, say, never turns
// Ready there.
func TestDeployRoleGrantsTheFleetsRequests(t *testing.T) {
	t.Parallel()
	role, _ := decodeDeploy(t)["ClusterRole/minikubelet-node"].(*rbacv1.ClusterRole)
	if role == nil {
		t.Fatal("docs/examples/deploy/ has no ClusterRole/minikubelet-node")
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	srv, kubeconfig := serveAPIServer(t)
	manifests := t.TempDir()
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(staticWebManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := resolveArgs(t, "--kubeconfig="+kubeconfig, "--nodes=2", "--node-name-prefix=sim", "--trace-format=json", "--port=0",
		"--root-dir="+t.TempDir(), "--runtime-latencies=0", "--pod-manifest-path="+manifests)
	if err != nil {
		t.Fatalf("resolve() error = %v", err)
	}
	rc, err := restConfigFromKubeconfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pw"}, StringData: map[string]string{"pw": "x"}}
	if _, err := client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}, Spec: v1.PodSpec{NodeName: "sim-1",
		Containers: []v1.Container{{Name: "c", Image: "busybox",
			Env: []v1.EnvVar{{Name: "PW", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
				LocalObjectReference: v1.LocalObjectReference{Name: "pw"}, Key: "pw"}}}},
			VolumeMounts: []v1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}}}},
		Volumes: []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The test's own requests, all made by now, are left out of what is checked.
	before := requestsByKind(t, srv)

	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	for _, p := range []string{"default/app", "default/static-web-sim-0", "default/static-web-sim-1"} {
		log.mustWait(t, ctx, 0, "Running status of "+p, func(e traceEvent) bool { return isRunning(e, p) })
	}
	// What the fleet must have made for the check to mean something: each node's CSINode (the
	// node is Ready only then) and lease, the token of the API pod's projected volume, both
	// mirror pods and a status. The counts are read until they are all in.
	want := map[requestKind]int{
		{verb: "create", group: "storage.k8s.io", resource: "csinodes"}:     2,
		{verb: "create", group: "coordination.k8s.io", resource: "leases"}:  2,
		{verb: "create", resource: "serviceaccounts", subresource: "token"}: 1,
		{verb: "create", resource: "pods"}:                                  2,
		{verb: "patch", resource: "pods", subresource: "status"}:            1,
	}
	made := map[requestKind]int{}
	for {
		for k, n := range requestsByKind(t, srv) {
			if n -= before[k]; n > 0 {
				made[k] = n
			}
		}
		missing := false
		for k, n := range want {
			missing = missing || made[k] < n
		}
		if !missing {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the fleet's requests = %v, want at least %v: %v", made, want, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
	for k, n := range requestsByKind(t, srv) {
		if n -= before[k]; n > 0 {
			made[k] = n
		}
	}
	for k, n := range made {
		if !grants(role.Rules, k) {
			t.Errorf("the ClusterRole %s does not grant %s, which the fleet made %d times", role.Name, k, n)
		}
	}
}

const staticWebManifest = `apiVersion: v1
kind: Pod
metadata:
  name: static-web
  namespace: default
spec:
  containers:
  - name: web
    image: registry.k8s.io/pause:3.10.1
`

// requestKind is what RBAC authorizes a resource request by.
type requestKind struct{ verb, group, resource, subresource string }

func (k requestKind) String() string {
	r := k.resource
	if k.subresource != "" {
		r += "/" + k.subresource
	}
	if k.group != "" {
		r += "." + k.group
	}
	return k.verb + " " + r
}

// rbacVerbs maps kube-apiserver's reported verb to the verb RBAC authorizes.
var rbacVerbs = map[string]string{"GET": "get", "LIST": "list", "WATCH": "watch", "POST": "create", "PUT": "update",
	"PATCH": "patch", "APPLY": "patch", "DELETE": "delete", "DELETECOLLECTION": "deletecollection"}

// requestsByKind reads srv's apiserver_request_total, summed over codes and scopes by the verb
// RBAC authorizes, the group, the resource and the subresource.
func requestsByKind(t *testing.T, srv *fakeapiserver.Server) map[requestKind]int {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer t0ken") // serveAPIServer's
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", rec.Code)
	}
	out := map[requestKind]int{}
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		labels, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, count, ok := strings.Cut(labels, "} ")
		n, err := strconv.Atoi(count)
		if !ok || err != nil {
			t.Fatalf("apiserver_request_total line %q: %v", line, err)
		}
		l := map[string]string{}
		for kv := range strings.SplitSeq(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = strings.Trim(v, `"`)
		}
		verb, ok := rbacVerbs[l["verb"]]
		if !ok {
			t.Fatalf("apiserver_request_total line %q: unknown verb", line)
		}
		out[requestKind{verb: verb, group: l["group"], resource: l["resource"], subresource: l["subresource"]}] += n
	}
	return out
}

// grants reports whether one of the rules allows k, as RBAC's rule matching does for resource
// requests: the verb, the API group and the resource ("resource/subresource" for a subresource)
// each listed, or "*".
func grants(rules []rbacv1.PolicyRule, k requestKind) bool {
	res := k.resource
	if k.subresource != "" {
		res += "/" + k.subresource
	}
	has := func(list []string, s string) bool { return slices.Contains(list, s) || slices.Contains(list, "*") }
	for _, r := range rules {
		if has(r.Verbs, k.verb) && has(r.APIGroups, k.group) && has(r.Resources, res) {
			return true
		}
	}
	return false
}
