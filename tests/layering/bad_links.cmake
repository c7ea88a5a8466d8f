# Link lines that break the layering, one breach of each kind, for the test layering_catches_links (the shape of
# tests/CMakeLists.txt's generated layering_links.cmake).
set(TARGETS framesim_core framesim_model framesim_trace framesim_config framesim_engine framesim_analysis)
set(DIR_framesim_core "/src/sim/core")
set(LINKS_framesim_core "fmt::fmt")
set(IFACE_framesim_core "fmt::fmt")
# upward: the cost model linking the YAML reader
set(DIR_framesim_model "/src/sim/model")
set(LINKS_framesim_model "framesim_core;framesim_config")
set(IFACE_framesim_model "framesim_core;framesim_config")
# ONNX PUBLIC: every user of trace would see it
set(DIR_framesim_trace "/src/sim/trace")
set(LINKS_framesim_trace "framesim_model;onnx")
set(IFACE_framesim_trace "framesim_model;onnx")
# ONNX from the wrong folder
set(DIR_framesim_config "/src/sim/config")
set(LINKS_framesim_config "framesim_model;$<LINK_ONLY:framesim_trace>;onnx")
set(IFACE_framesim_config "framesim_model;$<LINK_ONLY:framesim_trace>;$<LINK_ONLY:onnx>")
# SimGrid PRIVATE to the engine: fine here, but it reaches whatever links the engine library
set(DIR_framesim_engine "/src/sim/engine")
set(LINKS_framesim_engine "framesim_model;PkgConfig::SimGrid")
set(IFACE_framesim_engine "framesim_model;$<LINK_ONLY:PkgConfig::SimGrid>")
# the reports linking the engine (and so SimGrid)
set(DIR_framesim_analysis "/src/analysis")
set(LINKS_framesim_analysis "framesim_model;framesim_engine")
set(IFACE_framesim_analysis "framesim_model;framesim_engine")
