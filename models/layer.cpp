// Anchors the models library so it builds even before its first source file lands.
namespace gp { int models_layer_anchor = 0; }
