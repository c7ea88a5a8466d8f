# Link lines for layering_catches_public_links, with the headers in public_tree/: config links trace PUBLIC
# although no config header includes trace (what config did before: every config user got ONNX's include folders).
set(TARGETS framesim_model framesim_trace framesim_config)
set(DIR_framesim_model "/src/sim/model")
set(LINKS_framesim_model "")
set(IFACE_framesim_model "")
set(DIR_framesim_trace "/src/sim/trace")
set(LINKS_framesim_trace "framesim_model;onnx")
set(IFACE_framesim_trace "framesim_model;$<LINK_ONLY:onnx>")
set(DIR_framesim_config "/src/sim/config")
set(LINKS_framesim_config "framesim_model;framesim_trace")
set(IFACE_framesim_config "framesim_model;framesim_trace")
