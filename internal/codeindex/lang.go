package codeindex

import (
	"path/filepath"
	"strings"
	"unsafe"

	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// Language is one tree-sitter grammar and what a definition is in it.
type Language struct {
	Name    string
	Exts    []string
	grammar func() unsafe.Pointer
	// defs maps a definition node kind to the symbol kind it defines.
	defs map[string]string
	// nameField is the field of a definition node that holds its name
	// (per node kind; "name" when absent).
	nameField map[string]string
	// refs are the node kinds of identifiers that count as references.
	refs []string
	// containers are symbol kinds whose nested functions are methods.
	containers []string
}

// Symbol kinds.
const (
	KindFunction  = "function"
	KindMethod    = "method"
	KindClass     = "class"
	KindInterface = "interface"
	KindType      = "type"
	KindEnum      = "enum"
	KindModule    = "module"
	KindImpl      = "impl"
	KindMacro     = "macro"
)

var languages = []*Language{
	{
		Name: "python", Exts: []string{".py", ".pyi"}, grammar: tspython.Language,
		defs:       map[string]string{"function_definition": KindFunction, "class_definition": KindClass},
		refs:       []string{"identifier"},
		containers: []string{KindClass},
	},
	{
		Name: "go", Exts: []string{".go"}, grammar: tsgo.Language,
		defs:      map[string]string{"function_declaration": KindFunction, "method_declaration": KindMethod, "type_spec": KindType},
		refs:      []string{"identifier", "type_identifier", "field_identifier"},
		nameField: map[string]string{},
	},
	{
		Name: "javascript", Exts: []string{".js", ".jsx", ".mjs", ".cjs"}, grammar: tsjs.Language,
		defs: map[string]string{"function_declaration": KindFunction, "generator_function_declaration": KindFunction,
			"class_declaration": KindClass, "method_definition": KindMethod},
		refs:       []string{"identifier", "property_identifier"},
		containers: []string{KindClass},
	},
	{
		Name: "typescript", Exts: []string{".ts", ".mts", ".cts"}, grammar: tsts.LanguageTypescript,
		defs:       tsDefs,
		refs:       []string{"identifier", "property_identifier", "type_identifier"},
		containers: []string{KindClass, KindInterface},
	},
	{
		Name: "tsx", Exts: []string{".tsx"}, grammar: tsts.LanguageTSX,
		defs:       tsDefs,
		refs:       []string{"identifier", "property_identifier", "type_identifier"},
		containers: []string{KindClass, KindInterface},
	},
	{
		Name: "java", Exts: []string{".java"}, grammar: tsjava.Language,
		defs: map[string]string{"class_declaration": KindClass, "interface_declaration": KindInterface, "enum_declaration": KindEnum,
			"record_declaration": KindClass, "method_declaration": KindMethod, "constructor_declaration": KindMethod},
		refs: []string{"identifier", "type_identifier"},
	},
	{
		Name: "rust", Exts: []string{".rs"}, grammar: tsrust.Language,
		defs: map[string]string{"function_item": KindFunction, "function_signature_item": KindFunction, "struct_item": KindType,
			"enum_item": KindEnum, "union_item": KindType, "trait_item": KindInterface, "type_item": KindType,
			"mod_item": KindModule, "macro_definition": KindMacro, "impl_item": KindImpl},
		nameField:  map[string]string{"impl_item": "type"},
		refs:       []string{"identifier", "type_identifier", "field_identifier"},
		containers: []string{KindImpl, KindInterface},
	},
}

var tsDefs = map[string]string{"function_declaration": KindFunction, "generator_function_declaration": KindFunction,
	"function_signature": KindFunction, "class_declaration": KindClass, "abstract_class_declaration": KindClass,
	"interface_declaration": KindInterface, "type_alias_declaration": KindType, "enum_declaration": KindEnum,
	"method_definition": KindMethod, "method_signature": KindMethod, "abstract_method_signature": KindMethod,
	"module": KindModule}

var byExt = func() map[string]*Language {
	m := map[string]*Language{}
	for _, l := range languages {
		for _, e := range l.Exts {
			m[e] = l
		}
	}
	return m
}()

// LanguageOf returns the grammar for path by its extension, or nil when
// no grammar is built in (the file is still listed in the file tree).
func LanguageOf(path string) *Language {
	return byExt[strings.ToLower(filepath.Ext(path))]
}

// Languages returns the names of the built-in grammars.
func Languages() []string {
	out := make([]string, len(languages))
	for i, l := range languages {
		out[i] = l.Name
	}
	return out
}

func (l *Language) nameFieldOf(kind string) string {
	if f, ok := l.nameField[kind]; ok {
		return f
	}
	return "name"
}

func (l *Language) isContainer(kind string) bool {
	for _, k := range l.containers {
		if k == kind {
			return true
		}
	}
	return false
}
