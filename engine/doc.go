// Package engine is the glue between a loaded configuration and the host: it
// picks a context profile, launches the profile's plugins and assemblers
// through go-plugin, checks what they declare, decodes and sends their HCL
// config, supervises them, and builds the host.Config of a session.
//
// Start does all of it; a *ConfigError (diagnostics pointing into the HCL)
// means the configuration is wrong and no session was started. Engine.Close
// kills every process it launched; Engine.KillOnSignal does the same on SIGINT
// and SIGTERM.
package engine
