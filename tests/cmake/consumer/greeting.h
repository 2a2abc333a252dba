#pragma once
// Included by greeter.h: touching it must regenerate greeter's proxy.
enum class Greeting { plain, loud };
