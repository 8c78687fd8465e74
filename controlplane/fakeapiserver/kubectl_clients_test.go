package fakeapiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// runFail runs kubectl expecting it to fail, and returns its standard error.
func (k *kubectl) runFail(t *testing.T, args ...string) string {
	t.Helper()
	cmd := k.command(context.Background(), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("kubectl %s succeeded, want a failure\nstdout:\n%s", strings.Join(args, " "), stdout.String())
	}
	return stderr.String()
}

// TestUnknownPathStatus checks the 404 of a path nothing is served at against kube-apiserver's:
// reason NotFound with details present and empty, which kubectl debug dereferences.
func TestUnknownPathStatus(t *testing.T) {
	h := newFixture(t, fakeapiserver.Options{}).srv.Handler()
	for _, path := range []string{
		"/api/v1/namespaces/default/pods/web/ephemeralcontainers",
		"/api/v1/persistentvolumes",
		"/apis/apps/v1/deployments",
	} {
		w := do(h, "GET", path, "", "")
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, w.Code)
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		details, ok := raw["details"].(map[string]any)
		if !ok || len(details) != 0 || raw["message"] != "the server could not find the requested resource" || raw["reason"] != "NotFound" {
			t.Errorf("GET %s = %s, want kube-apiserver's NotFound with empty details", path, w.Body.String())
		}
	}
}

// TestKubectlFirstTenMinutes drives kubectl through what broke for a new user: kubectl debug gives
// a clear error instead of panicking, a missing pod in an existing namespace is reported as the
// pod, and kubectl get all lists pods through the "all" category.
func TestKubectlFirstTenMinutes(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	f.createPod(t, newPod("default", "web", "node-1"))

	stderr := k.runFail(t, "debug", "web", "--image=busybox", "-c", "dbg")
	if strings.Contains(stderr, "panic") || !strings.Contains(stderr, "ephemeral containers are disabled for this cluster") {
		t.Errorf("kubectl debug stderr = %q, want the clear error about ephemeral containers", stderr)
	}

	stderr = k.runFail(t, "get", "pod", "nope", "-n", "kube-system")
	if want := `Error from server (NotFound): pods "nope" not found`; !strings.Contains(stderr, want) {
		t.Errorf("kubectl get pod nope -n kube-system stderr = %q, want %q", stderr, want)
	}
	stderr = k.runFail(t, "get", "pod", "nope", "-n", "missing")
	if want := `namespaces "missing" not found`; !strings.Contains(stderr, want) {
		t.Errorf("kubectl get pod nope -n missing stderr = %q, want %q", stderr, want)
	}

	// Pods and Services are the kinds of the category served; the kubernetes Service is there
	// from the start, as on a new cluster.
	rows := tableRows(k.run(t, "", "get", "all"))
	want := "[[NAME READY STATUS RESTARTS AGE] [pod/web 0/1 Pending 0 0s] [] [NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE] [service/kubernetes ClusterIP 10.0.0.1 <none> 443/TCP 0s]]"
	if fmt.Sprint(rows) != want {
		t.Errorf("kubectl get all = %v, want %s", rows, want)
	}
}

// TestKubectlNamespaces creates, lists and deletes a namespace with kubectl, and checks that a pod
// can only be created in a namespace that exists.
func TestKubectlNamespaces(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	got := tableRows(k.run(t, "", "get", "namespaces"))
	want := "[[NAME STATUS AGE] [default Active 0s] [kube-node-lease Active 0s] [kube-public Active 0s] [kube-system Active 0s]]"
	if fmtRows(got) != want {
		t.Errorf("kubectl get namespaces = %v, want %s", got, want)
	}
	stderr := k.runFail(t, "run", "web", "--image=nginx", "-n", "team")
	if want := `namespaces "team" not found`; !strings.Contains(stderr, want) {
		t.Errorf("kubectl run in a missing namespace stderr = %q, want %q", stderr, want)
	}
	ctx := context.Background()
	k.run(t, "", "create", "namespace", "empty")
	k.run(t, "", "run", "unbound", "--image=nginx", "-n", "empty")
	if out := k.run(t, "", "delete", "namespace", "empty", "--timeout=20s"); strings.TrimSpace(out) != `namespace "empty" deleted` {
		t.Errorf("kubectl delete namespace empty = %q", out)
	}
	k.run(t, "", "create", "namespace", "team")
	k.run(t, "", "run", "web", "--image=nginx", "-n", "team")
	f.createPod(t, newPod("team", "bound", "node-1"))
	k.run(t, "", "delete", "namespace", "team", "--wait=false")
	stderr = k.runFail(t, "run", "web2", "--image=nginx", "-n", "team")
	if want := "unable to create new content in namespace team because it is being terminated"; !strings.Contains(stderr, want) {
		t.Errorf("kubectl run in a terminating namespace stderr = %q, want %q", stderr, want)
	}
	got = tableRows(k.run(t, "", "get", "namespace", "team"))
	if len(got) != 2 || got[1][1] != "Terminating" {
		t.Errorf("kubectl get namespace team = %v, want it Terminating", got)
	}
	// The unbound pod went at once; the bound one waits for its kubelet, which confirms with a
	// delete of grace 0. Then the namespace goes with that request.
	bound, err := f.client.CoreV1().Pods("team").Get(ctx, "bound", metav1.GetOptions{})
	if err != nil || bound.DeletionTimestamp == nil || *bound.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("bound pod of the terminating namespace = %v, %v, want it deleted gracefully with 30s", bound, err)
	}
	if err := f.client.CoreV1().Pods("team").Delete(ctx, "bound", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{}); err == nil {
		t.Error("namespace team still exists after its content went")
	}
	stderr = k.runFail(t, "delete", "namespace", "kube-system")
	if want := `namespaces "kube-system" is forbidden: this namespace may not be deleted`; !strings.Contains(stderr, want) {
		t.Errorf("kubectl delete namespace kube-system stderr = %q, want %q", stderr, want)
	}
}

func fmtRows(rows [][]string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("[" + strings.Join(r, " ") + "]")
	}
	b.WriteString("]")
	return b.String()
}
