// Package fakeapiserver is a Kubernetes API server for the objects a kubelet reads and writes: Pods
// (API pods and mirror pods), the Node, Leases and Events (core/v1 and events.k8s.io/v1), and the
// Namespaces they live in; the ConfigMaps, Secrets, ServiceAccounts, Services, Endpoints and
// EndpointSlices pods refer to; the ResourceSlices DRA drivers publish and the kubelet wipes; and what kubectl asks of every cluster: an empty list of
// CustomResourceDefinitions, access and subject reviews, /metrics, and (given a source of usage)
// the metrics.k8s.io API. It runs none of these kinds' controllers except what namespaces and
// service accounts need. It keeps them in memory, and with
// Options.DataDir also in a bbolt database that a later server on the same directory loads
// (persist.go).
//
// Each served resource is one row of resources() (resources.go): its names, the verbs it serves
// (verbs.go) and the hooks of its kube-apiserver registry strategy. Discovery, the OpenAPI
// documents, the router's 405s, field management and the start-up log read the rows.
//
// It mirrors the parts of kube-apiserver the kubelet talks to: the core/v1 and
// coordination.k8s.io/v1 REST endpoints, list and watch with resource versions, field and label
// selectors, the status subresources of pods, nodes, namespaces and services (which, as the
// status strategies, take all but the spec from the write), pods/binding (handler_binding.go),
// pods/resize (handler_resize.go),
// graceful pod deletion, metav1.Status
// errors, discovery, OpenAPI v2 and v3 documents with the schemas generated from the k8s.io/api
// types (openapi.go), managed fields and server-side apply (managedfields.go, over the field
// manager of internal/fieldmanager), deletecollection and
// server-side tables, so that both client-go (typed clientsets, apply configurations, informers,
// the event recorder) and kubectl (explain, apply, apply --server-side) work against it unchanged.
// A client in the same process can make the kubelet's hottest requests without HTTP (Direct,
// direct.go): each runs the operation its handler runs, with the same outcome.
//
// # Packages
//
// Four concepts live in packages of their own under internal/: the field manager
// (internal/fieldmanager; kube-apiserver's is k8s.io/apimachinery/pkg/util/managedfields, built
// per resource as RequestScope.FieldManager), which the writes hand their objects to
// (managedfields.go); compact JSON as encoding/json writes it (internal/compactjson),
// which the field manager's comparisons share with patch.go and wirecopy.go; the generated
// OpenAPI models (internal/openapi); and the registry strategies of Services (with their cluster
// IP and node port allocation), Endpoints, EndpointSlices, ResourceSlices and Namespaces
// (internal/registry; kube-apiserver's pkg/registry), whose hooks the rows of resources() take
// (strategies.go) and whose allocations read the store through the small registry.Store the
// server implements. The other kinds' strategies are still rows of resources() here, and the
// namespace lifecycle (namespaces.go) works on the store itself.
//
// # Resource versions and watches
//
// One counter numbers every write, as etcd's revision does for the real server. Each resource keeps
// a bounded history of its recent watch events; a watch that resumes from a version older than the
// history holds ends with an ERROR event carrying 410 Gone (reason Expired), which makes client-go
// reflectors relist, as they do against a real server whose watch cache moved on.
//
// Lists are paged with kube-apiserver's continue tokens over consistent snapshots, and watches get
// periodic bookmarks (paging.go, bookmarks.go). Creates go through the admission kube-apiserver's
// default plugins apply (admission.go, namespaces.go): a namespace must exist and not be
// terminating, and a pod gets its service account name, priority and default tolerations.
//
// # Pod deletion
//
// A pod bound to a node is deleted gracefully: the first DELETE sets deletionTimestamp and
// deletionGracePeriodSeconds and leaves the pod in place; the kubelet confirms with a second DELETE
// with gracePeriodSeconds=0, which removes it. Unbound pods, pods in a terminal phase and deletes
// with gracePeriodSeconds=0 remove the pod at once. Finalizers are stored but not honoured.
//
// Every write to a pod is also a trace.Event from trace.APIServer, emitted in resource-version
// order, so a trace shows the API writes interleaved with the kubelet's reactions to them.
//
// # Bounds
//
// Request bodies are limited to 3 MiB (413). A JSON patch may hold at most MaxJSONPatchOperations
// operations (413), and its copy operations may add at most MaxJSONPatchCopyBytes to the object
// (422): kube-apiserver's limits, codes and messages. A watch holds at most 64 KiB of encoded
// events before writing them, and a write its client does not take within 5 seconds drops the
// watch ("Forcing watcher close due to unresponsiveness", as kube-apiserver's cacher logs): the
// stream ends and the client watches again. Serve returns within about a second of its context
// ending, closing the connections of requests still running by then. limits.go holds the rest:
// Events expire EventTTL after their last write, the watch history is bounded in bytes as well as
// events, headers and bodies must arrive within kube-apiserver's timeouts, and connections are
// capped.
//
// # Authentication
//
// With Options.BearerToken every request must carry that token, or gets kube-apiserver's 401
// Status (auth.go); there is no authorization, so access reviews are always allowed (reviews.go). SelfSignedTLS makes a certificate to serve TLS with.
//
// # Concurrency
//
// The project's cores are driven by one goroutine and have no locks; the store is the documented
// exception. net/http serves each request on a goroutine of its own, so the store is truly shared
// by many goroutines and is guarded by one mutex, which every read-check-write sequence holds
// throughout. Work that grows with the request stays outside it: a body is decoded, and a patch
// applied to the version it read, before the lock is taken to commit, and a patch whose object
// changed meanwhile is applied again, as kube-apiserver's GuaranteedUpdate retries. A server-side
// apply is merged the same way, and a create records its managed fields before taking the lock;
// those of updates and other patches are computed under it, against the stored object they
// replace. The lock's waiters take turns as kube-apiserver's API Priority and Fairness would
// admit them (priority.go, internal/apf): exempt requests first, the priority levels by their
// shares, the flows of a level round-robin. The pod writes' trace events are emitted once the
// lock is released, in the order of their writes (traceorder.go). The server
// starts no goroutines besides the HTTP server's and the sweep of expired Events (run.go), and the
// only waiting besides the lock's and the trace order's is a watch request
// waiting for the next write or for its client to take the last one.
//
// A connection's write deadline is wall time by nature, so run.go reads the real clock to set
// one; that decides only when a stuck client is cut off, never what a response or the trace says.
//
// New requires a clock and a tracer (ErrMissingOption otherwise); there is no real-clock default.
package fakeapiserver
