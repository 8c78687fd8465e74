package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/nodestatus"
)

// deployDir holds the manifests that run shards of simulated nodes in a cluster.
const deployDir = "../../docs/examples/deploy"

// decodeDeploy decodes every object of every manifest in docs/examples/deploy/ strictly: an unknown or
// misspelled field, or a kind client-go does not know, fails.
func decodeDeploy(t *testing.T) map[string]runtime.Object {
	t.Helper()
	strict := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", deployDir, err)
	}
	objs := map[string]runtime.Object{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 0; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: document %d: %v", f, i, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, gvk, err := strict.Decode(doc, nil, nil)
			if err != nil {
				t.Errorf("%s: document %d: %v", f, i, err)
				continue
			}
			objs[gvk.Kind+"/"+nameOf(obj)] = obj
		}
	}
	return objs
}

func nameOf(obj runtime.Object) string {
	if o, ok := obj.(interface{ GetName() string }); ok {
		return o.GetName()
	}
	return ""
}

// TestDeployManifests checks the shard manifests against the API types, the kustomization
// against the files, the kubeconfig they carry, and the shard's command line against the flags
// `minikubelet run` accepts.
func TestDeployManifests(t *testing.T) {
	objs := decodeDeploy(t)
	for _, want := range []string{"Namespace/minikubelet", "ServiceAccount/minikubelet", "ClusterRole/minikubelet-node",
		"ClusterRoleBinding/minikubelet-node", "Secret/minikubelet-kubeconfig", "StatefulSet/minikubelet"} {
		if objs[want] == nil {
			t.Errorf("docs/examples/deploy/ has no %s", want)
		}
	}

	var kust struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	data, err := os.ReadFile(filepath.Join(deployDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &kust); err != nil {
		t.Fatal(err)
	}
	for _, r := range kust.Resources {
		if _, err := os.Stat(filepath.Join(deployDir, r)); err != nil {
			t.Errorf("kustomization lists %s: %v", r, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(kust.Resources, name) {
			t.Errorf("kustomization does not list %s", name)
		}
	}
	if kubectlPath, err := exec.LookPath("kubectl"); err == nil {
		// kustomize builds the set offline, as kubectl apply -k would before sending it.
		out, err := exec.Command(kubectlPath, "kustomize", deployDir).CombinedOutput()
		if err != nil {
			t.Errorf("kubectl kustomize deploy: %v\n%s", err, out)
		} else if n := strings.Count("\n"+string(out), "\nkind: "); n != len(objs) {
			t.Errorf("kubectl kustomize deploy gave %d objects, want %d:\n%s", n, len(objs), out)
		}
	}

	secret, _ := objs["Secret/minikubelet-kubeconfig"].(*v1.Secret)
	if secret != nil {
		if _, err := clientcmd.Load([]byte(secret.StringData["kubeconfig"])); err != nil {
			t.Errorf("the kubeconfig secret's kubeconfig: %v", err)
		}
	}

	binding, _ := objs["ClusterRoleBinding/minikubelet-node"].(*rbacv1.ClusterRoleBinding)
	sts, _ := objs["StatefulSet/minikubelet"].(*appsv1.StatefulSet)
	if sts == nil || binding == nil {
		t.Fatal("the StatefulSet or the ClusterRoleBinding is missing")
	}
	spec := sts.Spec.Template.Spec
	if got := binding.Subjects[0]; got.Name != spec.ServiceAccountName || got.Namespace != sts.Namespace {
		t.Errorf("the binding's subject %s/%s is not the shards' service account %s/%s", got.Namespace, got.Name, sts.Namespace, spec.ServiceAccountName)
	}
	c := spec.Containers[0]
	// The kubelet expands $(VAR) from the container's environment; the shard's node names come
	// from its pod name.
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			env[e.Name] = sts.Name + "-0"
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		if strings.Contains(a, "$(") {
			t.Errorf("argument %q refers to a variable the container does not have", c.Args[i])
		}
		args[i] = a
	}
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("the shard's command is %v, want minikubelet run", args)
	}
	cmd := newRunCommand()
	if err := cmd.ParseFlags(args[1:]); err != nil {
		t.Fatalf("minikubelet run %v: %v", args[1:], err)
	}
	// The files the flags name exist in the pod: the kubeconfig's mount holds the secret's key.
	kubeconfig, _ := cmd.Flags().GetString("kubeconfig")
	mounted := false
	for _, m := range c.VolumeMounts {
		if filepath.Join(m.MountPath, "kubeconfig") == kubeconfig {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("--kubeconfig=%s is not the kubeconfig secret's mount", kubeconfig)
	}
	prefix, _ := cmd.Flags().GetString("node-name-prefix")
	nodes, _ := cmd.Flags().GetInt("nodes")
	names := nodeNames(&runConfig{NodeName: "unused", Nodes: nodes, NodeNamePrefix: prefix})
	if len(names) != nodes || !strings.HasPrefix(names[0], sts.Name+"-0-") {
		t.Errorf("shard 0's nodes are %v, want %d names under %s-0-", names[:min(3, len(names))], nodes, sts.Name)
	}
}

// TestShardsStayOffSimulatedNodes: the shards' required node affinity, as the scheduler reads
// it, refuses a node minikubelet registers (its simulated label) and accepts a real node, so the
// shards never run on the nodes they simulate.
func TestShardsStayOffSimulatedNodes(t *testing.T) {
	sts, _ := decodeDeploy(t)["StatefulSet/minikubelet"].(*appsv1.StatefulSet)
	if sts == nil {
		t.Fatal("docs/examples/deploy/ has no StatefulSet/minikubelet")
	}
	pod := &v1.Pod{ObjectMeta: sts.Spec.Template.ObjectMeta, Spec: sts.Spec.Template.Spec}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	simulated := nodestatus.LocalNode("minikubelet-0-00", "10.0.0.1", nodestatus.Machine{})
	if got := simulated.Labels[nodestatus.SimulatedLabel]; got != "true" {
		t.Errorf("simulated node's label %s = %q, want true", nodestatus.SimulatedLabel, got)
	}
	real := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1",
		Labels: map[string]string{v1.LabelOSStable: "linux", v1.LabelHostname: "worker-1"}}}
	for _, tc := range []struct {
		node *v1.Node
		want bool
	}{{simulated, false}, {real, true}} {
		got, err := affinity.Match(tc.node)
		if err != nil {
			t.Fatalf("Match(%s) = %v", tc.node.Name, err)
		}
		if got != tc.want {
			t.Errorf("the shards' node affinity matches node %s (labels %v) = %v, want %v", tc.node.Name, tc.node.Labels, got, tc.want)
		}
	}
}
