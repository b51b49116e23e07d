// Package objects decodes YAML and JSON streams of Kubernetes objects, as
// kubectl and kustomize print them: the one place the tests split a
// stream into its documents; and ReadFile, the one read of a YAML or JSON
// file into a typed value. It depends on apimachinery and its YAML library
// alone, so that the stand-ins built into images can use it too.
package objects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Decode returns the objects of a YAML or JSON stream in order, empty
// documents skipped. An error names the document that does not decode.
func Decode(stream []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("document %d: %w", i, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// OfKind returns the objects of objs whose kind is kind.
func OfKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// Into converts u into out, a typed object, strictly: a field that out's
// type does not know is an error, as in a manifest with a typo.
func Into(u *unstructured.Unstructured, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true)
}

// ReadFile decodes the YAML or JSON file path into out by its json tags,
// leniently: fields out's type does not name are the file's own business.
// An error names the file.
func ReadFile(path string, out any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
