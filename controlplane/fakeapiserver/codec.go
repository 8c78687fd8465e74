package fakeapiserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/munnerz/goautoneg"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// scheme knows the kinds this server decodes, so that a body naming another kind or version is
// recognised as such instead of being silently decoded into the wrong type.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := coordinationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := storagev1.AddToScheme(s); err != nil {
		panic(err)
	}
	for _, add := range []func(*runtime.Scheme) error{
		eventsv1.AddToScheme, discoveryv1.AddToScheme, authorizationv1.AddToScheme, authenticationv1.AddToScheme,
		resourcev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	return s
}()

// protoDecoder decodes and encodes the Kubernetes protobuf envelope, which client-go's clientsets
// send by default and ask for first.
var protoDecoder = protobuf.NewSerializer(scheme, scheme)

const protobufMediaType = "application/vnd.kubernetes.protobuf"

// strictDecoder reports unknown and duplicate fields as a non-fatal strict decoding error, which
// the handler turns into a rejection, a warning or nothing depending on fieldValidation.
var strictDecoder = k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme, scheme,
	k8sjson.SerializerOptions{Strict: true})

// sortedDecoder is strictDecoder for JSON whose keys are sorted and unique (body.sorted), whose
// apiVersion and kind it reads off the start of the document instead of decoding the whole
// document a first time to find them (sortedMetaFactory).
var sortedDecoder = k8sjson.NewSerializerWithOptions(sortedMetaFactory{}, scheme, scheme,
	k8sjson.SerializerOptions{Strict: true})

// sortedMetaFactory finds the apiVersion and kind of an object encoded with sorted, unique keys,
// in ASCII: an object that starts with those two keys has no other, and they are the values the
// default factory's decoding would find. That decoding matches keys without regard to case, but
// each other ASCII spelling of either key sorts before "apiVersion" or between the two, so that
// the object would not start with them; outside ASCII, some letters fold to ASCII ones (the
// Kelvin sign to K), so a document with any other byte is left to the default factory, as are
// values with escapes or control characters, which the decoding would rewrite, and any other
// start.
type sortedMetaFactory struct{}

func (sortedMetaFactory) Interpret(data []byte) (*schema.GroupVersionKind, error) {
	for _, c := range data {
		if c >= utf8.RuneSelf {
			return k8sjson.DefaultMetaFactory.Interpret(data)
		}
	}
	apiVersion, rest, ok := leadingString(data, `{"apiVersion":"`)
	if !ok {
		return k8sjson.DefaultMetaFactory.Interpret(data)
	}
	kind, rest, ok := leadingString(rest, `,"kind":"`)
	if !ok || len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') {
		return k8sjson.DefaultMetaFactory.Interpret(data)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return k8sjson.DefaultMetaFactory.Interpret(data)
	}
	return &schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind}, nil
}

// leadingString reads the string value after prefix at the start of data, up to its closing
// quote: printable ASCII without escapes only.
func leadingString(data []byte, prefix string) (string, []byte, bool) {
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return "", nil, false
	}
	data = data[len(prefix):]
	for i, c := range data {
		switch {
		case c == '"':
			return string(data[:i]), data[i+1:], true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return "", nil, false
		}
	}
	return "", nil, false
}

// fieldValidation is the fieldValidation query parameter.
type fieldValidation int

const (
	validationWarn fieldValidation = iota // the default since Kubernetes 1.27
	validationIgnore
	validationStrict
)

func parseFieldValidation(r *http.Request) (fieldValidation, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "", "Warn":
		return validationWarn, nil
	case "Ignore":
		return validationIgnore, nil
	case "Strict":
		return validationStrict, nil
	default:
		return 0, apierrors.NewBadRequest(fmt.Sprintf("fieldValidation must be one of Ignore, Warn or Strict, got %q", v))
	}
}

// readBody reads the request body within the size limit.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", tooLarge.Limit))
	}
	if timeout := bodyReadError(err); timeout != nil {
		return nil, timeout
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	return data, nil
}

// body is a request body and the form it is in.
type body struct {
	data  []byte
	proto bool
	// sorted says data was encoded from maps by encoding/json, as a strategic merge patch encodes
	// its result: each object's keys are unique and in byte order.
	sorted bool
}

// readObjectBody reads a create or update body: JSON, YAML (converted to JSON) or protobuf.
func readObjectBody(r *http.Request) (body, error) {
	data, proto, err := readObjectBodyData(r)
	return body{data: data, proto: proto}, err
}

func readObjectBodyData(r *http.Request) ([]byte, bool, error) {
	mediaType := "application/json"
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return nil, false, unsupportedMediaType(ct, bodyMediaTypes)
		}
		mediaType = mt
	}
	switch mediaType {
	case "application/json", "*/*", "application/yaml", protobufMediaType:
	default:
		return nil, false, unsupportedMediaType(mediaType, bodyMediaTypes)
	}
	data, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	switch mediaType {
	case protobufMediaType:
		return data, true, nil
	case "application/yaml":
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("decoding YAML body: %v", err))
		}
		return js, false, nil
	default:
		return data, false, nil
	}
}

// decode decodes a body as res's kind. Unknown or duplicate JSON fields reject the body under
// Strict and become warnings under Warn; protobuf has no such check.
func decode(res *resource, b body, fv fieldValidation) (runtime.Object, []string, error) {
	into := res.newObj()
	gvk := res.gvk()
	var obj runtime.Object
	var actual *schema.GroupVersionKind
	var err error
	if b.proto {
		obj, actual, err = protoDecoder.Decode(b.data, &gvk, into)
	} else if b.sorted {
		obj, actual, err = sortedDecoder.Decode(b.data, &gvk, into)
	} else {
		obj, actual, err = strictDecoder.Decode(b.data, &gvk, into)
	}
	var warnings []string
	if err != nil {
		if !runtime.IsStrictDecodingError(err) || obj == nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
				res.kind, res.gv.Version, res.kind, err))
		}
		strictErr, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		switch fv {
		case validationStrict:
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
				res.kind, res.gv.Version, res.kind, err))
		case validationWarn:
			for _, e := range strictErr.Errors() {
				warnings = append(warnings, e.Error())
			}
		}
	}
	if reflect.TypeOf(obj) != reflect.TypeOf(into) {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the kind of the object in the body (%s) does not match the resource %s",
			obj.GetObjectKind().GroupVersionKind().Kind, res.name))
	}
	if actual != nil && *actual != gvk {
		got := *actual
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the object is of kind %s",
			got.Kind, got.Version, res.kind, got))
	}
	return obj, warnings, nil
}

func writeWarnings(w http.ResponseWriter, warnings []string) {
	for _, msg := range warnings {
		w.Header().Add("Warning", "299 - "+strconv.Quote(msg))
	}
}

// output is what the client asked for in Accept.
type output int

const (
	outputJSON output = iota
	outputTable
	// outputProtobuf is the Kubernetes protobuf envelope, which kube-apiserver serves for every
	// built-in kind and client-go's clientsets ask for first.
	outputProtobuf
)

// negotiate picks the first media type in Accept that this server can produce for a resource:
// JSON, as objects or as meta.k8s.io Tables, or protobuf; a Table in protobuf is not one, as on
// kube-apiserver, which serves Tables as JSON and YAML only. Anything else (CBOR, whose feature
// gate is off in v1.35) is refused with 406 unless one of those is also accepted.
func negotiate(r *http.Request) (output, string, error) {
	return negotiateOf(r, true)
}

// negotiateJSON is negotiate for an answer this server produces as JSON only: a protobuf clause
// is passed over like any other it cannot produce.
func negotiateJSON(r *http.Request) (output, string, error) {
	return negotiateOf(r, false)
}

func negotiateOf(r *http.Request, proto bool) (output, string, error) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return outputJSON, "", nil
	}
	// kube-apiserver tries the clauses in goautoneg's order, highest q first and specific types
	// before wildcards, not in the header's; and compares types as written, without lowercasing.
	for _, c := range goautoneg.ParseAccept(accept) {
		switch {
		case c.Type == "application" && c.SubType == "vnd.kubernetes.protobuf" && proto:
			if c.Params["as"] == "" {
				return outputProtobuf, "", nil
			}
			continue
		case c.Type == "application" && (c.SubType == "json" || c.SubType == "*"), c.Type == "*" && c.SubType == "*":
		default:
			continue
		}
		switch c.Params["as"] {
		case "":
			return outputJSON, "", nil
		case "Table":
			if c.Params["g"] == "meta.k8s.io" && (c.Params["v"] == "v1" || c.Params["v"] == "v1beta1") {
				return outputTable, c.Params["v"], nil
			}
		}
	}
	return 0, "", notAcceptable(accept, proto)
}

// answerForm is the form of the answer to a write or of an error: protobuf when negotiate would
// pick it, JSON otherwise. A write whose Accept allows nothing this server produces never gets
// here (serveResource answers it 406 first); an error falls back to JSON, as kube-apiserver's
// does when its negotiation fails.
func answerForm(r *http.Request) output {
	if out, _, err := negotiate(r); err == nil && out == outputProtobuf {
		return outputProtobuf
	}
	return outputJSON
}
