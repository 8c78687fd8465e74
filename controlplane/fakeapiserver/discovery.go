package fakeapiserver

import (
	"net"
	"net/http"
	"runtime"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// ServerVersion is what /version reports: the Kubernetes minor version whose kubelet this
// project mirrors.
var ServerVersion = version.Info{
	Major:      "1",
	Minor:      "35",
	GitVersion: "v1.35.0-fakeapiserver",
	GitCommit:  "0000000000000000000000000000000000000000",
	BuildDate:  "2026-01-01T00:00:00Z",
	GoVersion:  runtime.Version(),
	Compiler:   runtime.Compiler,
	Platform:   runtime.GOOS + "/" + runtime.GOARCH,
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "only GET is allowed"))
		return
	}
	writeJSON(w, http.StatusOK, ServerVersion)
}

// The discovery documents are the legacy (unaggregated) ones. kubectl and client-go ask for the
// aggregated apidiscovery.k8s.io/v2 form first and fall back to these when the answer is plain
// application/json, as it is from servers that predate aggregated discovery.

func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	writeJSON(w, http.StatusOK, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: host},
		},
	})
}

// groups are the API groups of the served resources, in the order of their first row, each with
// its one version.
func (s *Server) groups() []metav1.APIGroup {
	var out []metav1.APIGroup
	seen := map[string]bool{}
	for _, res := range resources() {
		if res.gv.Group == "" || seen[res.gv.Group] || !res.servedBy(s) {
			continue
		}
		seen[res.gv.Group] = true
		gv := metav1.GroupVersionForDiscovery{GroupVersion: res.gv.String(), Version: res.gv.Version}
		out = append(out, metav1.APIGroup{Name: res.gv.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
	}
	return out
}

func (s *Server) serveGroupList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   s.groups(),
	})
}

func (s *Server) serveGroup(w http.ResponseWriter, r *http.Request, name string) {
	for _, g := range s.groups() {
		if g.Name == name {
			g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeJSON(w, http.StatusOK, &g)
			return
		}
	}
	writeError(w, notFoundPath(r.URL.Path))
}

// serveResourceList serves the APIResourceList of one group version ("v1" or "group/version"):
// each resource and subresource with the verbs its row gives it.
func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, gv string) {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv,
		APIResources: []metav1.APIResource{},
	}
	for _, res := range resources() {
		if res.gv.String() != gv || !res.servedBy(s) {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.name, SingularName: res.singular, Namespaced: res.namespaced, Kind: res.kind,
			Verbs: res.verbs.names(), ShortNames: res.shortNames, Categories: res.categories,
		})
		for _, sub := range res.subresources {
			kind := sub.kind
			if kind == "" {
				kind = res.kind
			}
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.name + "/" + sub.name, Namespaced: res.namespaced, Kind: kind, Verbs: sub.verbs.names(),
			})
		}
	}
	if len(list.APIResources) == 0 || strings.Count(gv, "/") > 1 {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// ServedResources describes what the server serves, for its start-up log line: the resources of
// each group version, in the order of the rows, then the other endpoints.
func (s *Server) ServedResources() string {
	var order []string
	names := map[string][]string{}
	for _, res := range resources() {
		if !res.servedBy(s) {
			continue
		}
		gv := res.gv.String()
		if gv == "v1" {
			gv = "core/v1"
		}
		if names[gv] == nil {
			order = append(order, gv)
		}
		names[gv] = append(names[gv], res.name)
	}
	parts := make([]string, 0, len(order)+1)
	for _, gv := range order {
		parts = append(parts, gv+" "+strings.Join(names[gv], ", "))
	}
	return strings.Join(append(parts, "discovery, /version, OpenAPI, /metrics"), "; ")
}
