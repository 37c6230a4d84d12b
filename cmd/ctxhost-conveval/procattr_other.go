//go:build !linux

package main

import "syscall"

// procAttr: only Linux has a parent-death signal; elsewhere the signal
// handler (stopOnSignal) is what ends the children.
func procAttr() *syscall.SysProcAttr { return nil }
