package klm

import (
	"context"
	_ "embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

//go:embed crds.yaml
var crdsYAML []byte

// crdFieldManager installs the stand-in's CustomResourceDefinitions.
const crdFieldManager = "klm-stand-in"

// InstallCRDs applies the CustomResourceDefinitions of Manifest and
// ModuleReleaseMeta to the control plane at cfg, and returns once both are
// established.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("klm: client: %w", err)
	}
	crds, err := Parse(crdsYAML)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd),
			client.ForceOwnership, client.FieldOwner(crdFieldManager))
		if err != nil {
			return fmt.Errorf("klm: install %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, c, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	err := poll.Until(ctx, name+" to be established", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return poll.Stop(err)
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conds {
			if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", conds)
	}, poll.Timeout(0))
	if err != nil {
		return fmt.Errorf("klm: %w", err)
	}
	return nil
}
