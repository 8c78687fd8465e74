package fakeapiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The OpenAPI v3 documents are skeletons: every served path and operation with its
// x-kubernetes-group-version-kind and x-kubernetes-action, and the fieldValidation and dryRun
// parameters on writes, but no schemas. That is what kubectl needs to hand field validation to
// the server (it looks for fieldValidation on the PATCH operation of the kind); kubectl falls back
// to the compiled-in types for strategic merge patch metadata. kubectl explain does not work.

// openAPIDocs maps "api/v1" and "apis/GROUP/VERSION" to their encoded documents.
var openAPIDocs = func() map[string][]byte {
	docs := map[string][]byte{}
	for _, res := range resources() {
		key := "api/" + res.gv.Version
		if res.gv.Group != "" {
			key = "apis/" + res.gv.String()
		}
		if _, ok := docs[key]; ok {
			continue
		}
		raw, err := json.Marshal(openAPIDoc(res.gv.String()))
		if err != nil {
			panic(err)
		}
		docs[key] = raw
	}
	return docs
}()

func openAPIDoc(gv string) map[string]any {
	paths := map[string]any{}
	for _, res := range resources() {
		if res.gv.String() != gv {
			continue
		}
		prefix := "/api/" + res.gv.Version
		if res.gv.Group != "" {
			prefix = "/apis/" + res.gv.String()
		}
		gvk := map[string]string{"group": res.gv.Group, "version": res.gv.Version, "kind": res.kind}
		op := func(action, id string, write bool) map[string]any {
			params := []any{}
			if write {
				for _, name := range []string{"dryRun", "fieldManager", "fieldValidation"} {
					params = append(params, map[string]any{"name": name, "in": "query", "schema": map[string]string{"type": "string"}})
				}
			}
			return map[string]any{
				"operationId":                     id + res.kind,
				"x-kubernetes-action":             action,
				"x-kubernetes-group-version-kind": gvk,
				"parameters":                      params,
				"responses":                       map[string]any{"200": map[string]string{"description": "OK"}},
			}
		}
		collection, item := prefix+"/"+res.name, prefix+"/"+res.name+"/{name}"
		if res.namespaced {
			paths[prefix+"/"+res.name] = map[string]any{"get": op("list", "listAllNamespaces", false)}
			collection = prefix + "/namespaces/{namespace}/" + res.name
			item = collection + "/{name}"
		}
		paths[collection] = map[string]any{"get": op("list", "list", false), "post": op("post", "create", true)}
		paths[item] = map[string]any{
			"get": op("get", "read", false), "put": op("put", "replace", true),
			"patch": op("patch", "patch", true), "delete": op("delete", "delete", false),
		}
		if res.hasStatus {
			paths[item+"/status"] = map[string]any{
				"get": op("get", "readStatus", false), "put": op("put", "replaceStatus", true),
				"patch": op("patch", "patchStatus", true),
			}
		}
	}
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]string{"title": "Kubernetes", "version": ServerVersion.GitVersion},
		"paths":      paths,
		"components": map[string]any{"schemas": map[string]any{}},
	}
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path == "/openapi/v3" {
		index := map[string]any{}
		for key, raw := range openAPIDocs {
			index[key] = map[string]string{"serverRelativeURL": fmt.Sprintf("/openapi/v3/%s?hash=%X", key, sha512.Sum512(raw))}
		}
		writeJSON(w, http.StatusOK, map[string]any{"paths": index})
		return
	}
	if raw, ok := openAPIDocs[strings.TrimPrefix(path, "/openapi/v3/")]; ok && strings.HasPrefix(path, "/openapi/v3/") {
		writeRaw(w, http.StatusOK, raw)
		return
	}
	// /openapi/v2 is not served; kubectl only falls back to it for what v3 lacks.
	writeError(w, notFoundPath(r.URL.Path))
}
