//lint:file-ignore SA1019 core/v1 Endpoints are deprecated since v1.33, and served because kube-apiserver v1.35 still serves them

package fakeapiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestObjectLifecycle drives each kind the kubelet reads through every verb with client-go's
// dynamic client: create, get, list with a label selector, watch from the list's version,
// update, merge patch, server-side apply (with its managed fields), delete.
func TestObjectLifecycle(t *testing.T) {
	for _, tc := range []struct {
		gvr    schema.GroupVersionResource
		kind   string
		object string // the body's kind-specific fields, as JSON
		change string // a merge patch of a kind-specific field
	}{
		{corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", `"data":{"k":"v"}`, `{"data":{"k":"w"}}`},
		{corev1.SchemeGroupVersion.WithResource("secrets"), "Secret", `"stringData":{"k":"v"}`, `{"data":{"k":"dw=="}}`},
		{corev1.SchemeGroupVersion.WithResource("serviceaccounts"), "ServiceAccount", `"automountServiceAccountToken":false`, `{"automountServiceAccountToken":true}`},
		{corev1.SchemeGroupVersion.WithResource("services"), "Service", `"spec":{"ports":[{"port":80}],"selector":{"app":"x"}}`, `{"spec":{"selector":{"app":"y"}}}`},
		{corev1.SchemeGroupVersion.WithResource("endpoints"), "Endpoints", `"subsets":[{"addresses":[{"ip":"10.1.0.1"}],"ports":[{"port":80}]}]`, `{"subsets":[{"addresses":[{"ip":"10.1.0.2"}],"ports":[{"port":80}]}]}`},
		{discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), "EndpointSlice", `"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.1"]}]`, `{"endpoints":[{"addresses":["10.1.0.2"]}]}`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			f := newFixture(t, fakeapiserver.Options{})
			ctx := context.Background()
			client := dynamic.NewForConfigOrDie(f.restConfig()).Resource(tc.gvr).Namespace("default")
			var obj unstructured.Unstructured
			body := `{"apiVersion":"` + tc.gvr.GroupVersion().String() + `","kind":"` + tc.kind +
				`","metadata":{"name":"x","labels":{"app":"x"}},` + tc.object + `}`
			if err := json.Unmarshal([]byte(body), &obj.Object); err != nil {
				t.Fatal(err)
			}
			created, err := client.Create(ctx, &obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("Create() = %v", err)
			}
			if created.GetUID() == "" || created.GetResourceVersion() == "" || len(created.GetManagedFields()) != 1 {
				t.Errorf("created %s has uid %q, resourceVersion %q, managedFields %v", tc.kind, created.GetUID(), created.GetResourceVersion(), created.GetManagedFields())
			}
			got, err := client.Get(ctx, "x", metav1.GetOptions{})
			if err != nil || got.GetResourceVersion() != created.GetResourceVersion() {
				t.Fatalf("Get() = %v, %v; want the created object", got, err)
			}
			list, err := client.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
			if err != nil {
				t.Fatalf("List() = %v", err)
			}
			var names []string
			for _, item := range list.Items {
				names = append(names, item.GetName())
			}
			if len(names) != 1 || names[0] != "x" {
				t.Errorf("List(app=x) = %v, want [x]", names)
			}
			w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), FieldSelector: "metadata.name=x"})
			if err != nil {
				t.Fatalf("Watch() = %v", err)
			}
			defer w.Stop()

			got.SetLabels(map[string]string{"app": "x", "updated": "yes"})
			if _, err := client.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("Update() = %v", err)
			}
			if _, err := client.Patch(ctx, "x", types.MergePatchType, []byte(tc.change), metav1.PatchOptions{}); err != nil {
				t.Fatalf("Patch() = %v", err)
			}
			apply := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": tc.gvr.GroupVersion().String(), "kind": tc.kind,
				"metadata": map[string]any{"name": "x", "annotations": map[string]any{"applied": "yes"}},
			}}
			applied, err := client.Apply(ctx, "x", apply, metav1.ApplyOptions{FieldManager: "tester"})
			if err != nil {
				t.Fatalf("Apply() = %v", err)
			}
			managers := map[string]bool{}
			for _, mf := range applied.GetManagedFields() {
				managers[mf.Manager+"/"+string(mf.Operation)] = true
			}
			if !managers["tester/Apply"] || applied.GetAnnotations()["applied"] != "yes" {
				t.Errorf("after apply: annotations %v, managers %v; want applied=yes and tester/Apply", applied.GetAnnotations(), managers)
			}
			if err := client.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("Delete() = %v", err)
			}
			if _, err := client.Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("Get() after Delete() = %v, want NotFound", err)
			}
			var types []watch.EventType
			for range 4 {
				types = append(types, next(t, w).Type)
			}
			want := []watch.EventType{watch.Modified, watch.Modified, watch.Modified, watch.Deleted}
			if diff := cmp.Diff(want, types); diff != "" {
				t.Errorf("watch events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecretStringData checks that stringData is merged into data on every write, winning over
// data, and never stored, and that an immutable Secret keeps its data.
func TestSecretStringData(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	secrets := f.client.CoreV1().Secrets("default")
	created, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data:       map[string][]byte{"a": []byte("from data"), "b": []byte("kept")},
		StringData: map[string]string{"a": "from stringData"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"a": []byte("from stringData"), "b": []byte("kept")}
	if diff := cmp.Diff(want, created.Data); diff != "" || created.StringData != nil || created.Type != corev1.SecretTypeOpaque {
		t.Errorf("created secret: type %q, stringData %v, data (-want +got):\n%s", created.Type, created.StringData, diff)
	}
	raw, err := f.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/secrets/s").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"a":"ZnJvbSBzdHJpbmdEYXRh"`) || strings.Contains(string(raw), "stringData") {
		t.Errorf("GET secret = %s, want data base64-encoded and no stringData", raw)
	}
	patched, err := secrets.Patch(ctx, "s", types.MergePatchType, []byte(`{"stringData":{"c":"new"},"immutable":true}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(patched.Data["c"]) != "new" || patched.StringData != nil {
		t.Errorf("patched secret data %v, stringData %v; want c=new merged", patched.Data, patched.StringData)
	}
	_, err = secrets.Patch(ctx, "s", types.MergePatchType, []byte(`{"stringData":{"c":"changed"}}`), metav1.PatchOptions{})
	if want := `Secret "s" is invalid: data: Forbidden: field is immutable when ` + "`immutable`" + ` is set`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("changing an immutable secret = %v, want %q", err, want)
	}
}

// TestServiceClusterIPs checks the cluster IPs services get: the kubernetes Service holds the
// first address of the range, a new Service a free one from the upper part of it, a requested
// one if free and in range; an update that leaves the cluster IP out keeps it, one that changes
// it is refused; a dry run gets the network address.
func TestServiceClusterIPs(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	services := f.client.CoreV1().Services("default")
	k, err := services.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k.Spec.ClusterIP != "10.0.0.1" || k.Spec.Ports[0].TargetPort != intstr.FromInt32(6443) {
		t.Errorf("kubernetes service clusterIP %s, ports %v; want 10.0.0.1 and 443 -> 6443", k.Spec.ClusterIP, k.Spec.Ports)
	}
	svc := func(name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
			ClusterIP: ip, Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}},
		}}
	}
	web, err := services.Create(ctx, svc("web", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ServiceSpec{
		Ports:                 []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}},
		Selector:              map[string]string{"app": "web"},
		ClusterIP:             web.Spec.ClusterIP,
		ClusterIPs:            []string{web.Spec.ClusterIP},
		Type:                  corev1.ServiceTypeClusterIP,
		SessionAffinity:       corev1.ServiceAffinityNone,
		IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
		IPFamilyPolicy:        ptr.To(corev1.IPFamilyPolicySingleStack),
		InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyCluster),
	}
	if diff := cmp.Diff(want, web.Spec); diff != "" {
		t.Errorf("created service spec (-want +got):\n%s", diff)
	}
	if ip := net.ParseIP(web.Spec.ClusterIP).To4(); ip == nil || !ip.Mask(net.CIDRMask(24, 32)).Equal(net.IPv4(10, 0, 0, 0)) || ip[3] < 17 || ip[3] > 254 {
		t.Errorf("clusterIP %s, want one of 10.0.0.17-254, the part of 10.0.0.0/24 left to dynamic allocation", web.Spec.ClusterIP)
	}
	if _, err := services.Create(ctx, svc("fixed", "10.0.0.5"), metav1.CreateOptions{}); err != nil {
		t.Errorf("create with a free clusterIP = %v", err)
	}
	for _, tc := range []struct{ name, ip, want string }{
		{"taken", "10.0.0.5", `Service "taken" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: provided IP is already allocated`},
		{"outside", "10.1.0.5", `Service "outside" is invalid: spec.clusterIPs: Invalid value: ["10.1.0.5"]: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24`},
	} {
		if _, err := services.Create(ctx, svc(tc.name, tc.ip), metav1.CreateOptions{}); !apierrors.IsInvalid(err) || err.Error() != tc.want {
			t.Errorf("create with clusterIP %s = %v, want %q", tc.ip, err, tc.want)
		}
	}
	dry, err := services.Create(ctx, svc("dry", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || dry.Spec.ClusterIP != "10.0.0.0" {
		t.Errorf("dry-run create = %v, clusterIP %q; want 10.0.0.0", err, dry.Spec.ClusterIP)
	}

	upd := web.DeepCopy()
	upd.Spec.ClusterIP, upd.Spec.ClusterIPs = "", nil
	upd.Spec.Selector = map[string]string{"app": "other"}
	after, err := services.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil || after.Spec.ClusterIP != web.Spec.ClusterIP {
		t.Errorf("update without clusterIP = %v, clusterIP %q; want it kept as %s", err, after.Spec.ClusterIP, web.Spec.ClusterIP)
	}
	upd = after.DeepCopy()
	upd.Spec.ClusterIP, upd.Spec.ClusterIPs = "10.0.0.6", []string{"10.0.0.6"}
	wantErr := `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.6"]: may not change once set`
	if _, err := services.Update(ctx, upd, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || err.Error() != wantErr {
		t.Errorf("update changing clusterIP = %v, want %q", err, wantErr)
	}
}

// TestDefaultServiceAccounts checks that every namespace has its default ServiceAccount, from
// its creation, and gets it back if it is deleted.
func TestDefaultServiceAccounts(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	all, err := f.client.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sa := range all.Items {
		got = append(got, sa.Namespace+"/"+sa.Name)
	}
	want := []string{"default/default", "kube-node-lease/default", "kube-public/default", "kube-system/default"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("service accounts at start (-want +got):\n%s", diff)
	}
	f.createNamespace(t, "team")
	first, err := f.client.CoreV1().ServiceAccounts("team").Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("default service account of a new namespace: %v", err)
	}
	f.createPod(t, newPod("team", "web", ""))
	if err := f.client.CoreV1().ServiceAccounts("team").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := f.client.CoreV1().ServiceAccounts("team").Get(ctx, "default", metav1.GetOptions{})
	if err != nil || again.ResourceVersion == first.ResourceVersion {
		t.Errorf("default service account after its deletion = %v, %v; want a new one", again, err)
	}
}

// TestObjectValidation checks kube-apiserver's validation of the new kinds: 422 Invalid, with
// its messages and field paths.
func TestObjectValidation(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	core := f.client.CoreV1()
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name   string
		create func() error
		want   string
	}{
		{"configmap key", func() error {
			_, err := core.ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a b": "v"}}, metav1.CreateOptions{})
			return err
		}, `ConfigMap "c" is invalid: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		{"configmap size", func() error {
			_, err := core.ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": big, "b": "v"}}, metav1.CreateOptions{})
			return err
		}, `ConfigMap "c" is invalid: []: Too long: may not be more than 1048576 bytes`},
		{"configmap name", func() error {
			_, err := core.ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "C"}}, metav1.CreateOptions{})
			return err
		}, `ConfigMap "C" is invalid: metadata.name: Invalid value: "C": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"tls secret", func() error {
			_, err := core.Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Type: corev1.SecretTypeTLS}, metav1.CreateOptions{})
			return err
		}, `Secret "s" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]`},
		{"service name", func() error {
			_, err := core.Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "1web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}, `Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
		{"service ports", func() error {
			_, err := core.Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{{Port: 80}, {Name: "b", Port: 70000, Protocol: "HTTP"}},
			}}, metav1.CreateOptions{})
			return err
		}, `Service "web" is invalid: [spec.ports[0].name: Required value, spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP", spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]`},
		{"service without ports", func() error {
			_, err := core.Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{})
			return err
		}, `Service "web" is invalid: spec.ports: Required value`},
		{"service cluster IP", func() error {
			_, err := core.Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
				ClusterIP: "10.0.0.300", Ports: []corev1.ServicePort{{Port: 80}},
			}}, metav1.CreateOptions{})
			return err
		}, `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"endpoints address", func() error {
			_, err := core.Endpoints("default").Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Subsets: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}},
			}}}, metav1.CreateOptions{})
			return err
		}, `Endpoints "e" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`},
		{"endpointslice address type", func() error {
			_, err := f.client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "e"}, AddressType: "IPv5"}, metav1.CreateOptions{})
			return err
		}, `EndpointSlice.discovery.k8s.io "e" is invalid: addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.create()
			if !apierrors.IsInvalid(err) || err.Error() != tc.want {
				t.Errorf("create = %v\nwant 422 %q", err, tc.want)
			}
		})
	}
}

// TestEndpointsDeprecation checks that requests on core/v1 Endpoints carry kube-apiserver's
// deprecation warning, and those on other kinds none.
func TestEndpointsDeprecation(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/endpoints":  `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`,
		"/api/v1/namespaces/default/configmaps": "",
	} {
		w := do(f.srv.Handler(), "GET", path, "", "")
		if got := w.Header().Get("Warning"); got != want {
			t.Errorf("GET %s Warning = %q, want %q", path, got, want)
		}
	}
}

// TestCRDsEmpty checks that CustomResourceDefinitions list empty, cannot be created, and are
// discovered with only the read verbs.
func TestCRDsEmpty(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	crds := dynamic.NewForConfigOrDie(f.restConfig()).Resource(schema.GroupVersionResource{
		Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
	})
	list, err := crds.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("List(crds) = %v, %v; want an empty list", list, err)
	}
	_, err = crds.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "a.b"},
	}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("Create(crd) = %v, want 405 MethodNotAllowed", err)
	}
	resources, err := f.client.Discovery().ServerResourcesForGroupVersion("apiextensions.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if got := resources.APIResources[0].Verbs; !cmp.Equal(got, metav1.Verbs{"get", "list", "watch"}) {
		t.Errorf("discovered verbs of CRDs = %v, want get, list, watch", got)
	}
}

// TestServiceNodePorts checks the node ports NodePort and LoadBalancer Services get: a free one
// from the upper part of 30000-32767 for each port (ports of one number share it), the one asked
// for if free and in range, a health check node port for a Local LoadBalancer; an update keeps
// them, and a change to ClusterIP drops them.
func TestServiceNodePorts(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	services := f.client.CoreV1().Services("default")
	svc := func(name string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Type: typ, Ports: ports}}
	}
	dns, err := services.Create(ctx, svc("dns", corev1.ServiceTypeNodePort,
		corev1.ServicePort{Name: "tcp", Port: 53, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	np := dns.Spec.Ports[0].NodePort
	if np < 30086 || np > 32767 || dns.Spec.Ports[1].NodePort != np || dns.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Errorf("node ports %d and %d, external traffic policy %q; want one shared port in 30086-32767 and Cluster",
			np, dns.Spec.Ports[1].NodePort, dns.Spec.ExternalTrafficPolicy)
	}
	for _, tc := range []struct {
		nodePort int32
		want     string
	}{
		{np, fmt.Sprintf(`Service "taken" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated`, np)},
		{80, `Service "taken" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767`},
	} {
		_, err := services.Create(ctx, svc("taken", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: tc.nodePort}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != tc.want {
			t.Errorf("create with nodePort %d = %v, want %q", tc.nodePort, err, tc.want)
		}
	}
	lb := svc("lb", corev1.ServiceTypeLoadBalancer, corev1.ServicePort{Port: 443, NodePort: 30443})
	lb.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	lb, err = services.Create(ctx, lb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Spec.Ports[0].NodePort != 30443 || lb.Spec.HealthCheckNodePort == 0 || !ptr.Deref(lb.Spec.AllocateLoadBalancerNodePorts, false) {
		t.Errorf("load balancer node port %d, health check node port %d, allocateLoadBalancerNodePorts %v; want 30443, one, true",
			lb.Spec.Ports[0].NodePort, lb.Spec.HealthCheckNodePort, lb.Spec.AllocateLoadBalancerNodePorts)
	}
	out := do(f.srv.Handler(), "GET", "/api/v1/namespaces/default/services/lb", "", "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if err := json.Unmarshal(out.Body.Bytes(), &table); err != nil || len(table.Rows) != 1 {
		t.Fatalf("table of lb = %v, %s", err, out.Body.String())
	}
	if cells := table.Rows[0].Cells; cells[3] != "<pending>" || cells[4] != "443:30443/TCP" {
		t.Errorf("table row of lb = %v, want EXTERNAL-IP <pending> and PORT(S) 443:30443/TCP", cells)
	}

	upd := dns.DeepCopy()
	for i := range upd.Spec.Ports {
		upd.Spec.Ports[i].NodePort = 0
	}
	kept, err := services.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil || kept.Spec.Ports[0].NodePort != np || kept.Spec.Ports[1].NodePort != np {
		t.Errorf("update without node ports = %v, ports %v; want %d kept", err, kept.Spec.Ports, np)
	}
	upd = kept.DeepCopy()
	upd.Spec.Type = corev1.ServiceTypeClusterIP
	upd.Spec.ExternalTrafficPolicy = ""
	cluster, err := services.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil || cluster.Spec.Ports[0].NodePort != 0 {
		t.Errorf("update to ClusterIP = %v, ports %v; want the node ports dropped", err, cluster.Spec.Ports)
	}
}
