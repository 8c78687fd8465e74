package fakeapiserver

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// The documents are served the way kube-openapi's handlers serve them for kube-apiserver: JSON or
// the gnostic protobuf encoding by the Accept header (406 for neither), with a strong ETag that is
// the document's SHA-512, If-None-Match answered with 304, and the v3 index naming each group
// version's document with its hash, so that a client caches a document until the hash changes.
// kubectl asks for /openapi/v2 as protobuf and for /openapi/v3 documents as JSON.

const (
	openAPIV2Proto           = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV2ProtoDeprecated = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	openAPIV3Proto           = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
	openAPIV3ProtoDeprecated = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// encodedDoc is one document in both encodings, with the ETag of its JSON form (a client that
// switches encodings is told apart by Vary: Accept, as on the real server).
type encodedDoc struct {
	json, proto []byte
	etag        string
}

type encodedDocs struct {
	v2      encodedDoc
	v3      map[string]encodedDoc
	v3Index []byte
}

var encodedOpenAPI = sync.OnceValues(func() (*encodedDocs, error) {
	specs, err := builtOpenAPI()
	if err != nil {
		return nil, err
	}
	out := &encodedDocs{v3: map[string]encodedDoc{}}
	raw, err := json.Marshal(specs.v2)
	if err != nil {
		return nil, fmt.Errorf("encode OpenAPI v2 document: %w", err)
	}
	doc, err := openapiv2.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("convert OpenAPI v2 document to protobuf: %w", err)
	}
	pb, err := proto.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode OpenAPI v2 document as protobuf: %w", err)
	}
	out.v2 = encodedDoc{json: raw, proto: pb, etag: etagOf(raw)}
	index := map[string]any{}
	for key, s := range specs.v3 {
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("encode OpenAPI v3 document of %s: %w", key, err)
		}
		doc, err := openapiv3.ParseDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("convert OpenAPI v3 document of %s to protobuf: %w", key, err)
		}
		pb, err := proto.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("encode OpenAPI v3 document of %s as protobuf: %w", key, err)
		}
		e := encodedDoc{json: raw, proto: pb, etag: etagOf(raw)}
		out.v3[key] = e
		index[key] = map[string]string{"serverRelativeURL": v3URL(key, e.etag)}
	}
	if out.v3Index, err = json.Marshal(map[string]any{"paths": index}); err != nil {
		return nil, fmt.Errorf("encode OpenAPI v3 index: %w", err)
	}
	return out, nil
})

func etagOf(data []byte) string { return fmt.Sprintf("%X", sha512.Sum512(data)) }

func v3URL(key, etag string) string {
	return (&url.URL{Path: "/openapi/v3/" + key, RawQuery: url.Values{"hash": {etag}}.Encode()}).String()
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	docs, err := encodedOpenAPI()
	if err != nil {
		writeError(w, internalError(err))
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/openapi/v2":
		serveOpenAPIDoc(w, r, docs.v2, openAPIV2Proto, openAPIV2ProtoDeprecated)
	case path == "/openapi/v3":
		serveDoc(w, r, "application/json", docs.v3Index, etagOf(docs.v3Index))
	case strings.HasPrefix(path, "/openapi/v3/"):
		key := strings.TrimPrefix(path, "/openapi/v3/")
		doc, ok := docs.v3[key]
		if !ok {
			writeError(w, notFoundPath(path))
			return
		}
		if hash := r.URL.Query().Get("hash"); hash != "" {
			if hash != doc.etag {
				// An outdated link from an older index: point at the current document.
				http.Redirect(w, r, v3URL(key, doc.etag), http.StatusMovedPermanently)
				return
			}
			// The hash pins the content, so the client may keep it for good.
			w.Header().Set("Cache-Control", "public, immutable")
		}
		serveOpenAPIDoc(w, r, doc, openAPIV3Proto, openAPIV3ProtoDeprecated)
	default:
		writeError(w, notFoundPath(path))
	}
}

// serveOpenAPIDoc answers with the first encoding of doc the Accept header allows, by quality:
// JSON, or protobuf under either of its two media subtypes (the response names the current
// one); 406 when the client takes neither.
func serveOpenAPIDoc(w http.ResponseWriter, r *http.Request, doc encodedDoc, protoType, protoDeprecated string) {
	w.Header().Add("Vary", "Accept")
	for _, clause := range acceptClauses(r.Header.Get("Accept")) {
		typ, sub, _ := strings.Cut(clause, "/")
		if typ != "application" && typ != "*" {
			continue
		}
		switch sub {
		case "json", "*":
			serveDoc(w, r, "application/json", doc.json, doc.etag)
			return
		case protoType, protoDeprecated:
			serveDoc(w, r, "application/"+protoType, doc.proto, doc.etag)
			return
		}
	}
	w.WriteHeader(http.StatusNotAcceptable)
}

func serveDoc(w http.ResponseWriter, r *http.Request, contentType string, data []byte, etag string) {
	quoted := strconv.Quote(etag)
	w.Header().Set("Etag", quoted)
	w.Header().Set("Content-Type", contentType)
	if match := r.Header.Get("If-None-Match"); match != "" && (match == quoted || match == "*") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = bytes.NewReader(data).WriteTo(w)
	}
}

// acceptClauses returns the media ranges of an Accept header, highest quality first (ties keep
// their order; an absent header accepts anything). Ranges with quality 0 are left out.
func acceptClauses(accept string) []string {
	if strings.TrimSpace(accept) == "" {
		return []string{"*/*"}
	}
	type clause struct {
		mt string
		q  float64
	}
	var out []clause
	for _, part := range strings.Split(accept, ",") {
		// Parsed by hand: the deprecated protobuf subtypes hold an "@", which mime.ParseMediaType
		// refuses in a media type.
		fields := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		if !strings.Contains(mt, "/") {
			continue
		}
		q := 1.0
		for _, p := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "q" {
				var err error
				if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
					q = 0
				}
			}
		}
		if q > 0 {
			out = append(out, clause{mt, q})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].q > out[j].q })
	mts := make([]string, len(out))
	for i, c := range out {
		mts[i] = c.mt
	}
	return mts
}
