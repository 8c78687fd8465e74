package fakeapiserver

import (
	"encoding/json"
	"reflect"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ConfigMaps and Secrets are stored as kube-apiserver's configmap and secret registries store
// them: validated (data keys, the 1 MiB total, a Secret's type-specific keys), immutable once
// `immutable` is set, and a Secret's stringData merged into data on every write, as the v1 to
// internal conversion does, so that no stored Secret has stringData. Their data is served as it
// is stored; a Secret's is base64 in JSON, as the []byte fields are encoded.

// maxSecretSize is kube-apiserver's limit on the total size of a ConfigMap's or a Secret's data
// (core.MaxSecretSize).
const maxSecretSize = 1 << 20

func configMapResource() *resource {
	return &resource{
		name: "configmaps", singular: "configmap", kind: "ConfigMap", gv: coreV1, namespaced: true,
		shortNames: []string{"cm"}, verbs: verbsStored,
		newObj:         func() runtime.Object { return &corev1.ConfigMap{} },
		fieldSet:       metaFields,
		validate:       validateConfigMap,
		validateUpdate: validateConfigMapUpdate,
		columns:        configMapColumns,
		cells:          configMapCells,
	}
}

func secretResource() *resource {
	return &resource{
		name: "secrets", singular: "secret", kind: "Secret", gv: coreV1, namespaced: true,
		verbs:          verbsStored,
		newObj:         func() runtime.Object { return &corev1.Secret{} },
		fieldSet:       secretFields,
		prepareCreate:  normalizeSecret,
		validate:       validateSecret,
		prepareUpdate:  prepareSecretUpdate,
		validateUpdate: validateSecretUpdate,
		columns:        secretColumns,
		cells:          secretCells,
	}
}

// secretFields adds the type, the one field label kube-apiserver's secret registry adds.
func secretFields(obj runtime.Object) fields.Set {
	set := metaFields(obj)
	set["type"] = string(obj.(*corev1.Secret).Type)
	return set
}

// normalizeSecret is what a Secret goes through on its way in: the v1 defaulting (type Opaque)
// and the conversion that merges stringData into data, stringData winning.
func normalizeSecret(obj runtime.Object) {
	secret := obj.(*corev1.Secret)
	if secret.Type == "" {
		secret.Type = corev1.SecretTypeOpaque
	}
	if len(secret.StringData) > 0 && secret.Data == nil {
		secret.Data = make(map[string][]byte, len(secret.StringData))
	}
	for k, v := range secret.StringData {
		secret.Data[k] = []byte(v)
	}
	secret.StringData = nil
}

func prepareSecretUpdate(_, newObj runtime.Object) field.ErrorList {
	normalizeSecret(newObj)
	return nil
}

// sortedKeys returns the keys of a ConfigMap's or Secret's data in order, so that validation
// reports its errors in the same order every time (kube-apiserver ranges over the map).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func validateConfigMap(obj runtime.Object) field.ErrorList {
	cm := obj.(*corev1.ConfigMap)
	errs := validateMeta(obj, true)
	total := 0
	for _, key := range sortedKeys(cm.Data) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(cm.Data[key])
	}
	for _, key := range sortedKeys(cm.BinaryData) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		total += len(cm.BinaryData[key])
	}
	if total > maxSecretSize {
		// The empty path is kube-apiserver's: the error is about the whole object.
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxSecretSize))
	}
	return errs
}

// immutableForbidden is the error of a change to an immutable ConfigMap or Secret.
func immutableForbidden(path string) *field.Error {
	return field.Forbidden(field.NewPath(path), "field is immutable when `immutable` is set")
}

func validateConfigMapUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldCM, newCM := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
	var errs field.ErrorList
	if oldCM.Immutable != nil && *oldCM.Immutable {
		if newCM.Immutable == nil || !*newCM.Immutable {
			errs = append(errs, immutableForbidden("immutable"))
		}
		if !reflect.DeepEqual(newCM.Data, oldCM.Data) {
			errs = append(errs, immutableForbidden("data"))
		}
		if !reflect.DeepEqual(newCM.BinaryData, oldCM.BinaryData) {
			errs = append(errs, immutableForbidden("binaryData"))
		}
	}
	return errs
}

// validateSecret is ValidateSecret: the data keys and size, and the keys each built-in type
// requires.
func validateSecret(obj runtime.Object) field.ErrorList {
	secret := obj.(*corev1.Secret)
	errs := validateMeta(obj, true)
	data := field.NewPath("data")
	total := 0
	for _, key := range sortedKeys(secret.Data) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(data.Key(key), key, msg))
		}
		total += len(secret.Data[key])
	}
	if total > maxSecretSize {
		errs = append(errs, field.TooLong(data, "", maxSecretSize))
	}
	has := func(key string) bool { _, ok := secret.Data[key]; return ok }
	validJSON := func(key string) {
		if !has(key) {
			errs = append(errs, field.Required(data.Key(key), ""))
			return
		}
		if err := json.Unmarshal(secret.Data[key], &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(data.Key(key), "<secret contents redacted>", err.Error()))
		}
	}
	switch secret.Type {
	case corev1.SecretTypeServiceAccountToken:
		if secret.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		validJSON(corev1.DockerConfigKey)
	case corev1.SecretTypeDockerConfigJson:
		validJSON(corev1.DockerConfigJsonKey)
	case corev1.SecretTypeBasicAuth:
		if !has(corev1.BasicAuthUsernameKey) && !has(corev1.BasicAuthPasswordKey) {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(secret.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(data.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if !has(corev1.TLSCertKey) {
			errs = append(errs, field.Required(data.Key(corev1.TLSCertKey), ""))
		}
		if !has(corev1.TLSPrivateKeyKey) {
			errs = append(errs, field.Required(data.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return errs
}

func validateSecretUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldSecret, newSecret := oldObj.(*corev1.Secret), newObj.(*corev1.Secret)
	var errs field.ErrorList
	if newSecret.Type != oldSecret.Type {
		errs = append(errs, field.Invalid(field.NewPath("type"), newSecret.Type, "field is immutable"))
	}
	if oldSecret.Immutable != nil && *oldSecret.Immutable {
		if newSecret.Immutable == nil || !*newSecret.Immutable {
			errs = append(errs, immutableForbidden("immutable"))
		}
		if !reflect.DeepEqual(newSecret.Data, oldSecret.Data) {
			errs = append(errs, immutableForbidden("data"))
		}
	}
	return errs
}

var configMapColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Data", "string", "", 0),
	col("Age", "string", "", 0),
}

func configMapCells(now time.Time, obj runtime.Object) []any {
	cm := obj.(*corev1.ConfigMap)
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(now, cm.CreationTimestamp)}
}

var secretColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Type", "string", "", 0),
	col("Data", "string", "", 0),
	col("Age", "string", "", 0),
}

func secretCells(now time.Time, obj runtime.Object) []any {
	secret := obj.(*corev1.Secret)
	return []any{secret.Name, string(secret.Type), int64(len(secret.Data)), age(now, secret.CreationTimestamp)}
}
