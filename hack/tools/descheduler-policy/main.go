// Command descheduler-policy validates Kubernetes descheduler policies
// (DeschedulerPolicy, descheduler/v1alpha2) the way the descheduler does
// when it loads one, with its own API types, and prints what it decoded:
//
//	descheduler-policy FILE...
//
// Each file and each plugin's args are decoded strictly, every plugin
// config is checked by the plugin's own validator, and every plugin named
// in an extension point must be known. On success it prints each file's
// profiles as JSON (enabled plugins per extension point, decoded args); on
// any problem it exits 1. Only the plugins deploy/examples/descheduler uses
// are registered (docs/development.md, "Tools in hack/tools").
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/api/v1alpha2"
	"sigs.k8s.io/descheduler/pkg/descheduler/scheme"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removepodsviolatingnodeaffinity"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Profile is one decoded profile: the plugins enabled at each extension
// point and each configured plugin's args, as the plugin's args type
// encodes them.
type Profile struct {
	Name    string                     `json:"name"`
	Enabled map[string][]string        `json:"enabled"`
	Args    map[string]json.RawMessage `json:"args"`
}

// Policy is one file's decoded policy.
type Policy struct {
	File     string    `json:"file"`
	Profiles []Profile `json:"profiles"`
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: descheduler-policy FILE...")
		return 2
	}
	register()
	out := []Policy{}
	failed := false
	for _, file := range args {
		p, err := load(file)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
			failed = true
			continue
		}
		out = append(out, *p)
	}
	if failed {
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// register fills the registry that the v1alpha2 conversion decodes plugin
// args with, as the descheduler's RegisterDefaultPlugins does for these two.
func register() {
	pluginregistry.PluginRegistry = pluginregistry.NewRegistry()
	pluginregistry.Register(defaultevictor.PluginName, defaultevictor.New, &defaultevictor.DefaultEvictor{},
		&defaultevictor.DefaultEvictorArgs{}, defaultevictor.ValidateDefaultEvictorArgs,
		defaultevictor.SetDefaults_DefaultEvictorArgs, pluginregistry.PluginRegistry)
	pluginregistry.Register(removepodsviolatingnodeaffinity.PluginName, removepodsviolatingnodeaffinity.New,
		&removepodsviolatingnodeaffinity.RemovePodsViolatingNodeAffinity{},
		&removepodsviolatingnodeaffinity.RemovePodsViolatingNodeAffinityArgs{},
		removepodsviolatingnodeaffinity.ValidateRemovePodsViolatingNodeAffinityArgs,
		removepodsviolatingnodeaffinity.SetDefaults_RemovePodsViolatingNodeAffinityArgs, pluginregistry.PluginRegistry)
}

// strict decodes with the descheduler's scheme, rejecting unknown and
// duplicate fields; the descheduler's own codec factory is lenient at the
// top level, which would let a misspelt field pass unnoticed.
var strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)

func load(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var policy api.DeschedulerPolicy
	if err := runtime.DecodeInto(strict.UniversalDecoder(v1alpha2.SchemeGroupVersion, api.SchemeGroupVersion), data, &policy); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(policy.Profiles) == 0 {
		return nil, errors.New("no profiles")
	}
	out := &Policy{File: file}
	var errs []error
	for _, prof := range policy.Profiles {
		p := Profile{Name: prof.Name, Enabled: map[string][]string{}, Args: map[string]json.RawMessage{}}
		for _, pc := range prof.PluginConfigs {
			u, ok := pluginregistry.PluginRegistry[pc.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("profile %s: plugin %s in pluginConfig is not registered", prof.Name, pc.Name))
				continue
			}
			if pc.Args == nil {
				errs = append(errs, fmt.Errorf("profile %s: plugin %s has no args", prof.Name, pc.Name))
				continue
			}
			if err := u.PluginArgValidator(pc.Args); err != nil {
				errs = append(errs, fmt.Errorf("profile %s: plugin %s: %w", prof.Name, pc.Name, err))
			}
			raw, err := json.Marshal(pc.Args)
			if err != nil {
				return nil, err
			}
			p.Args[pc.Name] = raw
		}
		for point, set := range map[string]api.PluginSet{
			"preSort": prof.Plugins.PreSort, "sort": prof.Plugins.Sort, "deschedule": prof.Plugins.Deschedule,
			"balance": prof.Plugins.Balance, "filter": prof.Plugins.Filter, "preEvictionFilter": prof.Plugins.PreEvictionFilter,
		} {
			for _, name := range slices.Concat(set.Enabled, set.Disabled) {
				if _, ok := pluginregistry.PluginRegistry[name]; !ok {
					errs = append(errs, fmt.Errorf("profile %s: plugin %s at %s is not registered", prof.Name, name, point))
				}
			}
			if len(set.Enabled) > 0 {
				p.Enabled[point] = set.Enabled
			}
		}
		out.Profiles = append(out.Profiles, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
