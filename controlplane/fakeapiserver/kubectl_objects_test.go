//lint:file-ignore SA1019 core/v1 Endpoints are deprecated since v1.33, and served because kube-apiserver v1.35 still serves them

package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// appBundle is an ordinary application bundle, as `kubectl apply -f` is given one.
const appBundle = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: app-secret
stringData:
  password: s3cret
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: web
    image: nginx:1.27
    envFrom:
    - configMapRef:
        name: app-config
    env:
    - name: PASSWORD
      valueFrom:
        secretKeyRef:
          name: app-secret
          key: password
`

// TestKubectlApplyBundle applies a ConfigMap, a Secret with stringData, a Service and a Pod with
// the real kubectl (whose field validation lists CRDs), then reads them back with kubectl get,
// and checks what the server stored.
func TestKubectlApplyBundle(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	out := k.run(t, appBundle, "apply", "-f", "-")
	for _, want := range []string{"configmap/app-config created", "secret/app-secret created", "service/web created", "pod/web created"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply output lacks %q:\n%s", want, out)
		}
	}
	// A Secret's stringData is never stored, so kubectl's three-way patch always puts it back
	// and reports the Secret configured, as against a real cluster.
	want := "configmap/app-config unchanged\nsecret/app-secret configured\nservice/web unchanged\npod/web unchanged\n"
	if out := k.run(t, appBundle, "apply", "-f", "-"); out != want {
		t.Errorf("second kubectl apply = %q, want %q", out, want)
	}
	secret, err := f.client.CoreV1().Secrets("default").Get(context.Background(), "app-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["password"]) != "s3cret" || secret.StringData != nil {
		t.Errorf("stored secret data %q stringData %v, want password merged into data", secret.Data, secret.StringData)
	}
	svc, err := f.client.CoreV1().Services("default").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// No endpoints controller runs, so the Service's Endpoints are a client's to write.
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.244.0.5"}},
		Ports:     []corev1.EndpointPort{{Name: "http", Port: 8080}},
	}}}
	if _, err := f.client.CoreV1().Endpoints("default").Create(context.Background(), ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(90 * time.Second)
	got := fmtRows(tableRows(k.run(t, "", "get", "cm,secret,svc,sa,ep")))
	want = fmtRows([][]string{
		{"NAME", "DATA", "AGE"},
		{"configmap/app-config", "1", "90s"},
		{"configmap/kube-root-ca.crt", "1", "90s"},
		{},
		{"NAME", "TYPE", "DATA", "AGE"},
		{"secret/app-secret", "Opaque", "1", "90s"},
		{},
		{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"},
		{"service/kubernetes", "ClusterIP", "10.0.0.1", "<none>", "443/TCP", "90s"},
		{"service/web", "ClusterIP", svc.Spec.ClusterIP, "<none>", "80/TCP", "90s"},
		{},
		{"NAME", "AGE"},
		{"serviceaccount/default", "90s"},
		{},
		{"NAME", "ENDPOINTS", "AGE"},
		{"endpoints/web", "10.244.0.5:8080", "90s"},
	})
	if got != want {
		t.Errorf("kubectl get cm,secret,svc,sa,ep =\n%s\nwant\n%s", got, want)
	}
	if out := k.run(t, "", "get", "svc", "web", "-o", "wide"); !strings.Contains(out, "app=web") {
		t.Errorf("kubectl get svc web -o wide = %q, want the selector column", out)
	}
	if out := k.run(t, "", "explain", "secret.stringData"); !strings.Contains(out, "stringData allows specifying non-binary secret data") {
		t.Errorf("kubectl explain secret.stringData = %q, want the field's description", out)
	}
}

// TestKubectlAuth checks `kubectl auth can-i` and `kubectl auth whoami`.
func TestKubectlAuth(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	if out := strings.TrimSpace(k.run(t, "", "auth", "can-i", "create", "pods")); out != "yes" {
		t.Errorf("kubectl auth can-i create pods = %q, want yes", out)
	}
	if out := k.run(t, "", "auth", "can-i", "--list"); !strings.Contains(out, "*.*") {
		t.Errorf("kubectl auth can-i --list = %q, want the rule for every resource", out)
	}
	if out := k.run(t, "", "auth", "whoami"); !strings.Contains(out, "system:anonymous") {
		t.Errorf("kubectl auth whoami = %q, want system:anonymous", out)
	}
}

// TestKubectlTop checks `kubectl top node` and `kubectl top pod` with a metrics source, and
// kubectl's answer without one.
func TestKubectlTop(t *testing.T) {
	t0 := start.Add(-time.Minute)
	sample := func(at time.Time, cpu float64, mem uint64) fakeapiserver.UsageSample {
		return fakeapiserver.UsageSample{Timestamp: at, StartTime: t0, CPUSeconds: cpu, MemoryBytes: mem}
	}
	source := fakeUsage{fakeapiserver.ResourceUsage{
		Nodes: []fakeapiserver.NodeUsage{{Name: "node-1", Previous: sample(t0, 10, 1<<30), Latest: sample(t0.Add(10*time.Second), 12, 1<<30)}},
		Pods: []fakeapiserver.PodUsage{{Namespace: "default", Name: "web", Containers: []fakeapiserver.ContainerUsage{
			{Name: "c", Previous: sample(t0, 1, 64<<20), Latest: sample(t0.Add(10*time.Second), 1.1, 64<<20)},
		}}},
	}}
	f := newFixture(t, fakeapiserver.Options{ResourceMetrics: source})
	k := newKubectl(t, f)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
		}},
	}
	if _, err := f.client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.createPod(t, newPod("default", "web", "node-1"))
	got := fmtRows(tableRows(k.run(t, "", "top", "node")))
	want := fmtRows([][]string{
		{"NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"},
		{"node-1", "200m", "10%", "1024Mi", "25%"},
	})
	if got != want {
		t.Errorf("kubectl top node =\n%s\nwant\n%s", got, want)
	}
	got = fmtRows(tableRows(k.run(t, "", "top", "pod")))
	want = fmtRows([][]string{{"NAME", "CPU(cores)", "MEMORY(bytes)"}, {"web", "10m", "64Mi"}})
	if got != want {
		t.Errorf("kubectl top pod =\n%s\nwant\n%s", got, want)
	}

	bare := newKubectl(t, newFixture(t, fakeapiserver.Options{}))
	if stderr := bare.runFail(t, "top", "node"); !strings.Contains(stderr, "Metrics API not available") {
		t.Errorf("kubectl top node without metrics = %q, want Metrics API not available", stderr)
	}
}
