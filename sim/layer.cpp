// Anchors the sim library so it builds even before its first source file lands.
namespace gp { int sim_layer_anchor = 0; }
