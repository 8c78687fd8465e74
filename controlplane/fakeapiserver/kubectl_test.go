package fakeapiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// kubectl runs kubectl against the fixture's server with a generated kubeconfig.
type kubectl struct {
	path       string
	kubeconfig string
	home       string
}

func newKubectl(t *testing.T, f *fixture) *kubectl {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: %s
contexts:
- name: fake
  context:
    cluster: fake
    user: fake
    namespace: default
current-context: fake
users:
- name: fake
  user: {}
`, f.ts.URL)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &kubectl{path: path, kubeconfig: kubeconfig, home: dir}
}

func (k *kubectl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", filepath.Join(k.home, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.home, "KUBECTL_KUBERC=false")
	return cmd
}

// run runs kubectl to completion and returns its standard output.
func (k *kubectl) run(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := k.command(context.Background(), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("kubectl %s stderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	return stdout.String()
}

// fields splits kubectl's table output into rows of whitespace-separated cells.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

func TestKubectlGet(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	ctx := context.Background()
	f.createPod(t, newPod("default", "web", "node-1"))
	crash := f.createPod(t, newPod("kube-system", "crash", "node-1"))
	crash.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", ContainerStatuses: []corev1.ContainerStatus{{
		Name: "c", RestartCount: 4,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
	}}}
	if _, err := f.client.CoreV1().Pods("kube-system").UpdateStatus(ctx, crash, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(90e9)

	got := tableRows(k.run(t, "", "get", "pods", "-A"))
	want := [][]string{
		{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"},
		{"default", "web", "0/1", "Pending", "0", "90s"},
		{"kube-system", "crash", "0/1", "CrashLoopBackOff", "4", "90s"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kubectl get pods -A =\n%v\nwant\n%v", got, want)
	}
	got = tableRows(k.run(t, "", "get", "pods", "-n", "kube-system", "-o", "wide"))
	want = [][]string{
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"},
		{"crash", "0/1", "CrashLoopBackOff", "4", "90s", "10.0.0.7", "node-1", "<none>", "<none>"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kubectl get pods -o wide =\n%v\nwant\n%v", got, want)
	}

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.35.0"},
		},
	}
	if _, err := f.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = tableRows(k.run(t, "", "get", "nodes"))
	want = [][]string{{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}, {"node-1", "Ready", "worker", "0s", "v1.35.0"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kubectl get nodes =\n%v\nwant\n%v", got, want)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1")}}
	if _, err := f.client.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = tableRows(k.run(t, "", "get", "leases", "-A"))
	want = [][]string{{"NAMESPACE", "NAME", "HOLDER", "AGE"}, {"kube-node-lease", "node-1", "node-1", "0s"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kubectl get leases -A =\n%v\nwant\n%v", got, want)
	}

	var pod corev1.Pod
	if err := yaml.Unmarshal([]byte(k.run(t, "", "get", "pod", "web", "-o", "yaml")), &pod); err != nil {
		t.Fatalf("kubectl get pod web -o yaml: %v", err)
	}
	if pod.Name != "web" || pod.Spec.NodeName != "node-1" || pod.Kind != "Pod" {
		t.Errorf("kubectl get pod web -o yaml = %s %s on %q, want Pod web on node-1", pod.Kind, pod.Name, pod.Spec.NodeName)
	}
}

func TestKubectlDeleteAndApply(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	ctx := context.Background()
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: applied
  labels: {v: "1"}
spec:
  containers:
  - name: c
    image: busybox:1.36
`
	if out := k.run(t, manifest, "apply", "-f", "-"); !strings.Contains(out, "pod/applied created") {
		t.Errorf("kubectl apply (first) = %q, want pod/applied created", out)
	}
	changed := strings.Replace(strings.Replace(manifest, `v: "1"`, `v: "2"`, 1), "1.36", "1.37", 1)
	if out := k.run(t, changed, "apply", "-f", "-"); !strings.Contains(out, "pod/applied configured") {
		t.Errorf("kubectl apply (second) = %q, want pod/applied configured", out)
	}
	pod, err := f.client.CoreV1().Pods("default").Get(ctx, "applied", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels["v"] != "2" || pod.Spec.Containers[0].Image != "busybox:1.37" || pod.Annotations[corev1.LastAppliedConfigAnnotation] == "" {
		t.Errorf("after the second apply: labels %v image %s, want v=2, busybox:1.37 and the last-applied annotation", pod.Labels, pod.Spec.Containers[0].Image)
	}
	if out := k.run(t, changed, "apply", "-f", "-"); !strings.Contains(out, "pod/applied unchanged") {
		t.Errorf("kubectl apply (third) = %q, want pod/applied unchanged", out)
	}
	// Strict server-side validation rejects an unknown field.
	bad := strings.Replace(manifest, "  containers:", "  bogus: 1\n  containers:", 1)
	cmd := k.command(ctx, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(bad)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), `unknown field "spec.bogus"`) {
		t.Errorf("kubectl apply (unknown field) = %v, %s; want an error naming spec.bogus", err, out)
	}

	if out := k.run(t, "", "delete", "pod", "applied", "--wait=false"); !strings.Contains(out, `pod "applied" deleted`) {
		t.Errorf("kubectl delete = %q, want deleted", out)
	}
	if _, err := f.client.CoreV1().Pods("default").Get(ctx, "applied", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(applied) after kubectl delete = %v, want NotFound (an unbound pod goes at once)", err)
	}
}

func TestKubectlWatch(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	f.createPod(t, newPod("default", "first", ""))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := k.command(ctx, "get", "pods", "-w", "--no-headers")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "first ") {
		t.Fatalf("kubectl get pods -w first line = %q, want the pod first", lines.Text())
	}
	f.createPod(t, newPod("default", "second", ""))
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "second ") {
		t.Errorf("kubectl get pods -w next line = %q, want the pod second", lines.Text())
	}
	cancel()
	_ = cmd.Wait()
}

func TestKubectlDescribe(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	pod := f.createPod(t, newPod("default", "described", "node-1"))
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "described.1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "described", UID: pod.UID,
			APIVersion: "v1", FieldPath: "spec.containers{c}"},
		Reason: "Pulled", Message: "Container image already present", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}, Count: 1,
		FirstTimestamp: metav1.NewTime(start), LastTimestamp: metav1.NewTime(start),
	}
	if _, err := f.client.CoreV1().Events("default").Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := k.run(t, "", "describe", "pod", "described")
	for _, want := range []string{"Name:", "described", "Node:", "node-1", "Pulled", "Container image already present"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe pod described does not contain %q:\n%s", want, out)
		}
	}
	if out := k.run(t, "", "get", "events"); !strings.Contains(out, "pod/described") {
		t.Errorf("kubectl get events = %q, want a row for pod/described", out)
	}
}
