// Anchors the calibrate library so it builds even before its first source file lands.
namespace gp { int calibrate_layer_anchor = 0; }
