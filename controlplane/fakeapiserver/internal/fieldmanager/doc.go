// Package fieldmanager records the managed fields of the fake API server's writes and merges its
// server-side applies. Its counterpart is kube-apiserver's field manager,
// k8s.io/apimachinery/pkg/util/managedfields over the structured-merge-diff library, which
// k8s.io/apiserver builds per resource (endpoints/installer.go, RequestScope.FieldManager) and
// its create, update and patch handlers call. It runs that library itself, with a type converter
// built from the server's OpenAPI models, and adds shortcuts that reach the library's outcome
// without its walk where they can prove it.
//
// Every create, update and non-apply patch records the fields it set under its field manager
// (the fieldManager parameter, else the client's user agent up to the first "/", which the
// server names) with operation Update, and the status subresource under subresource "status";
// an apply merges the applied configuration, reports conflicts with other managers' fields as
// 409, takes them over with force=true, and records operation Apply. As on the real server, the
// main resource of pods and nodes does not track status and their status subresource does not
// track the spec (the strategies' reset fields, resetFields).
//
// The library stamps the entries it touches with the wall clock; Track and Apply restamp them
// with the time the server gives (stampManagedFields), so that objects in a replay carry virtual
// times and stay the same run to run.
//
// # Shortcuts
//
// The library converts both objects of a write to typed values, validates and compares them.
// Track spares that work where it can prove the library's outcome, and takes the library's own
// path everywhere else:
//
//   - a create of a shape seen before takes the managed fields the library gave the first
//     (create.go);
//   - an update that changes only scalars its writer alone owns moves the writer's entry only
//     (scalars.go: scalarUpdate, statusScalarUpdate), proven on the objects' JSON walked beside
//     the schema (jsondiff.go);
//   - a status write is walked on copies that keep only the status (statusOnly), a write that
//     changes which status fields are set is compared on the JSON too (written.go), and the
//     library is handed the typed value it made of the last write's status (typed.go).
//
// Each shortcut's tests make random writes with and without it on two servers and compare the
// stored bytes; they live with the server, which makes the objects and the models, and reach
// the steps through Probe.
//
// A process has one Manager (the server's, built on its first write), and most of the
// shortcuts' caches are package state, shared by the process as they were by the server's
// requests. Each is bounded, and keyed by what its answers depend on, never by a Resource row,
// which every Server of the process builds anew: the type roots and the reset filters by the
// resource's group, version and kind or name (the reset filters also by the subresource and
// whether the resource has a status subresource, all resetFields reads), the shared creates'
// fields by a shape of the object, the kept typed values by the object's resource, namespace
// and name, the decoded field sets by their bytes. The type roots and reset filters hold one
// entry per served resource (and subresource); the others are cleared whole at their bound (the typed hints last one call).
//
// Nothing here takes the server's store lock: the server calls Track on the object it read for
// an update, or on a create's request alone, before it takes the lock to commit.
package fieldmanager
