//go:build !linux

package pluginhost

import "syscall"

// procAttr: only Linux has a parent-death signal; elsewhere the Registry's
// signal handler and Close are what end plugins.
func procAttr() *syscall.SysProcAttr { return nil }
