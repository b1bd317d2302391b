package dev.partwise.regen;
final class MemberProcess { static void run(java.util.Map<String,String> f) {} }
